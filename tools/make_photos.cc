// oomguard_make_photos: writes N photo-like JPEGs (smooth colour fields plus
// fine texture, like a photo of a scene), deterministic from a seed.
//
//   oomguard_make_photos --out DIR --count N [--seed S] [--width 640] [--height 480]
//                        [--quality 90] [--per-folder 1000]
//
// Files go to DIR/000/photo_000000.jpg, DIR/000/photo_000001.jpg, ... (N per
// folder) so a directory scan has to recurse. The same seed and index give the
// same bytes. At 640x480 and quality 90 a file is about 50-150 KB.
#include <turbojpeg.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }
};

void MakePhoto(uint64_t seed, uint64_t index, int w, int h, std::vector<uint8_t>* rgb) {
  Rng rng{seed * 1000003ull + index * 7919ull + 1};
  // A coarse grid of random colours, upsampled smoothly: the "scene".
  const int gw = 6 + static_cast<int>(rng.Next() % 6), gh = 4 + static_cast<int>(rng.Next() % 5);
  std::vector<float> grid(static_cast<size_t>(gw) * gh * 3);
  for (float& v : grid) v = static_cast<float>(30 + rng.Uniform() * 200);
  // Texture strength varies per photo, so file sizes spread like real photos.
  const double texture = 6 + rng.Uniform() * 10;
  rgb->resize(static_cast<size_t>(w) * h * 3);
  // Separable tables: the horizontal interpolation weights and a light wave
  // sin(0.05 x + 0.031 y + c) = sin(0.05 x) cos(0.031 y + c) + cos(0.05 x) sin(0.031 y + c).
  std::vector<int> col0(w);
  std::vector<float> colf(w), sx(w), cx(w);
  for (int x = 0; x < w; ++x) {
    float gx = static_cast<float>(x) * (gw - 1) / (w - 1);
    col0[x] = std::min(static_cast<int>(gx), gw - 2);
    float fx = gx - col0[x];
    colf[x] = fx * fx * (3 - 2 * fx);
    sx[x] = std::sin(0.05f * x);
    cx[x] = std::cos(0.05f * x);
  }
  std::vector<float> noise_row(static_cast<size_t>(w) * 3, 0.0f);
  std::vector<float> row_colour(static_cast<size_t>(gw) * 3);
  for (int y = 0; y < h; ++y) {
    float gy = static_cast<float>(y) * (gh - 1) / (h - 1);
    int y0 = std::min(static_cast<int>(gy), gh - 2);
    float fy = gy - y0;
    fy = fy * fy * (3 - 2 * fy);
    for (int i = 0; i < gw * 3; ++i) {
      row_colour[i] = grid[static_cast<size_t>(y0) * gw * 3 + i] * (1 - fy) +
                      grid[static_cast<size_t>(y0 + 1) * gw * 3 + i] * fy;
    }
    float wave_c[3], wave_s[3];
    for (int c = 0; c < 3; ++c) {
      wave_c[c] = 12.0f * std::cos(0.031f * y + c);
      wave_s[c] = 12.0f * std::sin(0.031f * y + c);
    }
    float prev[3] = {0, 0, 0};
    uint8_t* out = rgb->data() + static_cast<size_t>(y) * w * 3;
    for (int x = 0; x < w; ++x) {
      const int x0 = col0[x];
      const float fx = colf[x];
      // One random draw gives the grain for this pixel.
      float lum_noise = static_cast<float>((static_cast<double>(rng.Next() >> 40) / 16777216.0 - 0.5) * 2 * texture);
      for (int c = 0; c < 3; ++c) {
        float v = row_colour[x0 * 3 + c] * (1 - fx) + row_colour[(x0 + 1) * 3 + c] * fx;
        // Correlated grain: blend with the left and upper neighbour's noise.
        float& up = noise_row[static_cast<size_t>(x) * 3 + c];
        float n = 0.5f * lum_noise + 0.25f * prev[c] + 0.25f * up;
        prev[c] = n;
        up = n;
        float o = v + n * 2.0f + sx[x] * wave_c[c] + cx[x] * wave_s[c];
        out[x * 3 + c] = static_cast<uint8_t>(o <= 0.0f ? 0 : o >= 255.0f ? 255 : static_cast<int>(o + 0.5f));
      }
    }
  }
}

int Usage() {
  std::fprintf(stderr,
               "usage: oomguard_make_photos --out DIR --count N [--seed S] [--width 640] "
               "[--height 480] [--quality 90] [--per-folder 1000]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  long long count = -1, seed = 0, width = 640, height = 480, quality = 90, per_folder = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string v = argv[++i];
    char* end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    bool numeric = end != v.c_str() && *end == '\0';
    if (a == "--out") {
      out = v;
      continue;
    }
    if (!numeric) return Usage();
    if (a == "--count") count = n;
    else if (a == "--seed") seed = n;
    else if (a == "--width") width = n;
    else if (a == "--height") height = n;
    else if (a == "--quality") quality = n;
    else if (a == "--per-folder") per_folder = n;
    else return Usage();
  }
  if (out.empty() || count < 0 || width < 16 || height < 16 || quality < 1 || quality > 100 ||
      per_folder < 1) {
    return Usage();
  }
  tjhandle tj = tjInitCompress();
  std::vector<uint8_t> rgb;
  uint64_t total = 0;
  for (long long i = 0; i < count; ++i) {
    MakePhoto(static_cast<uint64_t>(seed), static_cast<uint64_t>(i), static_cast<int>(width),
              static_cast<int>(height), &rgb);
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    if (tjCompress2(tj, rgb.data(), static_cast<int>(width), 0, static_cast<int>(height), TJPF_RGB, &jpeg,
                    &size, TJSAMP_420, static_cast<int>(quality), 0) != 0) {
      std::fprintf(stderr, "oomguard_make_photos: %s\n", tjGetErrorStr2(tj));
      return 1;
    }
    char folder[32], name[48];
    std::snprintf(folder, sizeof folder, "%03lld", i / per_folder);
    std::snprintf(name, sizeof name, "photo_%06lld.jpg", i);
    std::filesystem::path dir = std::filesystem::path(out) / folder;
    std::filesystem::create_directories(dir);
    std::string path = (dir / name).string();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(jpeg, 1, size, f) != size || std::fclose(f) != 0) {
      std::fprintf(stderr, "oomguard_make_photos: cannot write %s\n", path.c_str());
      return 1;
    }
    tjFree(jpeg);
    total += size;
  }
  tjDestroy(tj);
  std::printf("{\"images\": %lld, \"bytes\": %llu, \"mean_bytes\": %llu}\n", count,
              static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(count > 0 ? total / count : 0));
  return 0;
}
