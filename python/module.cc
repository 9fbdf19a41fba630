// oomguard._oomguard: the C++ library seen from Python (pybind11). The Python
// package (python/oomguard/) wraps it; users never import this module directly.
//
//   run(command, args, stdin_text) -> (exit status, stdout, stderr)
//       runs a CLI subcommand in-process (the same code as the oomguard
//       binary), so plan/fit/split/explain from Python equal the CLI's JSON.
//   Feed(files_or_dir, ...)  -> .next() -> (uint8 NHWC ndarray, file indices)
//       the ndarray views the Batch's buffer (no copy); the Batch, and its
//       share of the byte budget, is released when the array is.
//   check_alloc_conf(text) -> "" or the plug-in's one-line error.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "oomguard/feed/feed.h"
#include "oomguard/feed/image_list.h"
#include "oomguard/mr/alloc_conf.h"
#include "oomguard/units.h"

namespace py = pybind11;

namespace oomguard::python {
namespace {

// An anonymous in-memory file standing in for one of fds 0, 1, 2 while a
// subcommand runs; the original fd comes back on destruction.
class RedirectedFd {
 public:
  explicit RedirectedFd(int fd) : fd_(fd) {
    file_ = memfd_create("oomguard", MFD_CLOEXEC);
    saved_ = dup(fd_);
    if (file_ < 0 || saved_ < 0) throw std::runtime_error("oomguard: cannot redirect standard streams");
  }
  ~RedirectedFd() {
    Restore();
    close(file_);
    close(saved_);
  }
  RedirectedFd(const RedirectedFd&) = delete;
  RedirectedFd& operator=(const RedirectedFd&) = delete;

  void Write(const std::string& text) {
    for (size_t done = 0; done < text.size();) {
      ssize_t n = write(file_, text.data() + done, text.size() - done);
      if (n <= 0) throw std::runtime_error("oomguard: cannot write standard input");
      done += static_cast<size_t>(n);
    }
    lseek(file_, 0, SEEK_SET);
  }
  void Attach() {
    dup2(file_, fd_);
    attached_ = true;
  }
  void Restore() {
    if (attached_) dup2(saved_, fd_);
    attached_ = false;
  }
  std::string Read() {
    std::string text;
    lseek(file_, 0, SEEK_SET);
    char buf[65536];
    for (ssize_t n; (n = read(file_, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    return text;
  }

 private:
  int fd_;
  int file_ = -1;
  int saved_ = -1;
  bool attached_ = false;
};

void FlushAll() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

using Command = int (*)(int, char**);

Command FindCommand(const std::string& name) {
  static const std::pair<const char*, Command> kCommands[] = {
      {"plan", cli::RunPlan}, {"fit", cli::RunFit},       {"split", cli::RunSplit},
      {"models", cli::RunModels}, {"gpus", cli::RunGpus}, {"explain", cli::RunExplain},
  };
  for (const auto& [n, run] : kCommands) {
    if (name == n) return run;
  }
  throw std::invalid_argument("oomguard: no command '" + name + "'");
}

// Runs `oomguard COMMAND ARGS...` in this process with its standard streams
// captured. Holds the GIL: no other Python thread writes while fds 1 and 2
// point elsewhere.
py::tuple Run(const std::string& command, const std::vector<std::string>& args,
              std::optional<std::string> stdin_text) {
  Command run = FindCommand(command);
  std::vector<std::string> argv_text{"oomguard " + command};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  FlushAll();
  RedirectedFd out(1), err(2);
  std::optional<RedirectedFd> in;
  if (stdin_text) {
    in.emplace(0);
    in->Write(*stdin_text);
    in->Attach();
  }
  out.Attach();
  err.Attach();
  int rc = 0;
  try {
    rc = run(static_cast<int>(argv_text.size()), argv.data());
  } catch (...) {
    FlushAll();
    throw;
  }
  FlushAll();
  std::clearerr(stdin);
  out.Restore();
  err.Restore();
  return py::make_tuple(rc, py::bytes(out.Read()), py::bytes(err.Read()));
}

// A started feed. next() returns (array, file indices) or None at the end.
class PyFeed {
 public:
  PyFeed(const py::object& source, uint64_t budget, uint32_t batch, uint32_t workers, const std::string& scale,
         std::optional<std::pair<uint32_t, uint32_t>> size, bool shuffle, uint64_t seed, uint32_t rank,
         uint32_t world_size, uint32_t epochs, bool skip_errors, uint32_t readahead) {
    std::vector<std::string> files;
    if (py::isinstance<py::str>(source)) {
      auto listed = feed::ListImages(feed::DefaultFileSystem(), source.cast<std::string>());
      if (!listed) throw std::invalid_argument(listed.error());
      files = std::move(*listed);
    } else {
      files = source.cast<std::vector<std::string>>();
      if (files.empty()) throw std::invalid_argument("no images given (an empty list)");
    }
    feed::FeedOptions o;
    o.budget_bytes = budget;
    o.batch_size = batch;
    o.workers = workers;
    o.epochs = epochs;
    auto parsed_scale = feed::ParseScale(scale);
    if (!parsed_scale) throw std::invalid_argument(parsed_scale.error());
    o.scale = *parsed_scale;
    if (size) {
      if (size->first < 1 || size->second < 1 || size->first > 65535 || size->second > 65535) {
        throw std::invalid_argument("size must be W x H with 1 <= W, H <= 65535");
      }
      o.size = feed::ImageSize{size->first, size->second};
    }
    o.shuffle = shuffle;
    o.seed = seed;
    o.rank = rank;
    o.world_size = world_size;
    o.on_error = skip_errors ? feed::OnError::kSkip : feed::OnError::kFail;
    o.readahead_batches = readahead;
    auto started = feed::Feed::Start(std::move(files), std::move(o));
    if (!started) throw std::invalid_argument(started.error());
    feed_ = std::move(*started);
  }

  py::object Next() {
    if (!feed_) return py::none();
    Result<feed::Batch> next = [&] {
      py::gil_scoped_release unlocked;
      return feed_->Next();
    }();
    if (!next) throw std::runtime_error(next.error());
    if (next->empty()) return py::none();
    auto* batch = new feed::Batch(std::move(*next));
    py::capsule owner(batch, [](void* p) { delete static_cast<feed::Batch*>(p); });
    const feed::ImageInBatch& first = batch->image(0);
    std::vector<uint64_t> indices;
    for (const feed::ImageInBatch& image : batch->images()) {
      if (image.width != first.width || image.height != first.height) {
        throw std::runtime_error("images of one batch differ in size; give size=(W, H) for an NHWC batch");
      }
      indices.push_back(image.file_index);
    }
    const py::ssize_t n = static_cast<py::ssize_t>(batch->size());
    const py::ssize_t h = first.height, w = first.width, c = feed::kChannels;
    py::array_t<uint8_t> array({n, h, w, c}, {h * w * c, w * c, c, py::ssize_t{1}}, batch->data(), owner);
    return py::make_tuple(array, indices);
  }

  py::dict Stats() const {
    if (!feed_) throw std::runtime_error("the feed is closed");
    feed::FeedStats s = feed_->stats();
    py::dict d;
    d["images"] = s.images;
    d["batches"] = s.batches;
    d["skipped"] = s.skipped;
    d["file_bytes_read"] = s.file_bytes_read;
    d["decoded_bytes"] = s.decoded_bytes;
    d["skipped_by_kind"] = s.skipped_by_kind;
    d["budget_bytes"] = s.budget_bytes;
    d["peak_budget_bytes"] = s.peak_budget_bytes;
    d["budget_in_use_bytes"] = s.budget_in_use_bytes;
    d["budget_waits"] = s.budget_waits;
    return d;
  }

  std::vector<std::string> Files() const {
    if (!feed_) throw std::runtime_error("the feed is closed");
    return feed_->files();
  }

  // Stops the pipeline's threads; arrays already handed out stay valid.
  void Close() {
    py::gil_scoped_release unlocked;
    feed_.reset();
  }

 private:
  std::unique_ptr<feed::Feed> feed_;
};

}  // namespace
}  // namespace oomguard::python

PYBIND11_MODULE(_oomguard, m) {
  using oomguard::python::PyFeed;
  m.doc() = "oomguard's C++ library; use the oomguard package instead.";
  m.def("run", &oomguard::python::Run, py::arg("command"), py::arg("args"), py::arg("stdin_text") = py::none());
  m.def("parse_bytes", [](const std::string& text) -> uint64_t {
    auto bytes = oomguard::ParseBytes(text);
    if (!bytes) throw std::invalid_argument(bytes.error());
    return *bytes;
  });
  m.def("check_alloc_conf", [](const std::string& text) -> std::string {
    auto conf = oomguard::mr::ParseAllocConf(text);
    return conf ? std::string() : conf.error();
  });
  py::class_<PyFeed>(m, "Feed")
      .def(py::init<const py::object&, uint64_t, uint32_t, uint32_t, const std::string&,
                    std::optional<std::pair<uint32_t, uint32_t>>, bool, uint64_t, uint32_t, uint32_t, uint32_t,
                    bool, uint32_t>(),
           py::arg("source"), py::arg("budget"), py::arg("batch"), py::arg("workers"), py::arg("scale"),
           py::arg("size"), py::arg("shuffle"), py::arg("seed"), py::arg("rank"), py::arg("world_size"),
           py::arg("epochs"), py::arg("skip_errors"), py::arg("readahead"))
      .def("next", &PyFeed::Next)
      .def("stats", &PyFeed::Stats)
      .def("files", &PyFeed::Files)
      .def("close", &PyFeed::Close);
}
