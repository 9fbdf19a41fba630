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
  std::vector<float> noise_row(static_cast<size_t>(w) * 3, 0.0f);
  for (int y = 0; y < h; ++y) {
    float gy = static_cast<float>(y) * (gh - 1) / (h - 1);
    int y0 = std::min(static_cast<int>(gy), gh - 2);
    float fy = gy - y0;
    fy = fy * fy * (3 - 2 * fy);
    float prev[3] = {0, 0, 0};
    for (int x = 0; x < w; ++x) {
      float gx = static_cast<float>(x) * (gw - 1) / (w - 1);
      int x0 = std::min(static_cast<int>(gx), gw - 2);
      float fx = gx - x0;
      fx = fx * fx * (3 - 2 * fx);
      float lum_noise = static_cast<float>((rng.Uniform() - 0.5) * 2 * texture);
      for (int c = 0; c < 3; ++c) {
        auto g = [&](int gxx, int gyy) { return grid[(static_cast<size_t>(gyy) * gw + gxx) * 3 + c]; };
        float v = (g(x0, y0) * (1 - fx) + g(x0 + 1, y0) * fx) * (1 - fy) +
                  (g(x0, y0 + 1) * (1 - fx) + g(x0 + 1, y0 + 1) * fx) * fy;
        // Correlated grain: blend with the left and upper neighbour's noise.
        float n = 0.5f * lum_noise + 0.25f * prev[c] + 0.25f * noise_row[static_cast<size_t>(x) * 3 + c];
        prev[c] = n;
        noise_row[static_cast<size_t>(x) * 3 + c] = n;
        float out = v + n * 2.0f + 12.0f * std::sin(0.05f * x + 0.031f * y + c);
        (*rgb)[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(std::lround(std::fmin(255.0f, std::fmax(0.0f, out))));
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
