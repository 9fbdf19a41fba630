// The real WatchedProcess and Clock: fork/exec, waitpid, kill, steady_clock.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "oomguard/doctor/process_tree.h"
#include "oomguard/doctor/watcher.h"

namespace oomguard::doctor {
namespace {

ExitStatus FromWaitStatus(int status) {
  ExitStatus e;
  if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.code = 128 + WTERMSIG(status);
  }
  return e;
}

// Reads what is in a non-blocking pipe now, up to about 1 MiB (the rest
// stays for the next call); closes it (-1) once every writer has closed it.
std::string Drain(int* fd) {
  std::string out;
  if (*fd < 0) return out;
  char buf[4096];
  while (true) {
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > (1 << 20)) break;  // the rest next time
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // the run (and every process holding the pipe) closed it
      close(*fd);
      *fd = -1;
    }
    break;  // EAGAIN: nothing more for now
  }
  return out;
}

// Our child, and after it has ended whatever it left running: this process is
// a child subreaper, so those processes are adopted here and reaped here.
class Child final : public WatchedProcess {
 public:
  Child(pid_t pid, int output_fd, int error_fd) : pid_(pid), output_fd_(output_fd), error_fd_(error_fd) {}
  ~Child() override {
    if (!root_done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (output_fd_ >= 0) close(output_fd_);
    if (error_fd_ >= 0) close(error_fd_);
  }
  std::string ReadOutput() override { return Drain(&output_fd_); }
  std::string ReadErrorOutput() override { return Drain(&error_fd_); }
  int pid() const override { return pid_; }
  int tree_root() const override { return root_done_ ? getpid() : pid_; }
  bool tree_root_counts() const override { return !root_done_; }
  bool root_alive() override {
    Poll();
    return !root_done_;
  }
  std::optional<ExitStatus> Poll() override {
    if (all_done_) return status_;
    int status = 0;
    if (!root_done_) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        root_done_ = true;
        status_ = FromWaitStatus(status);
      } else if (r < 0 && errno == ECHILD) {
        root_done_ = true;
      } else {
        return std::nullopt;
      }
    }
    // Reap what the run left behind; done when nothing of it is left.
    while (true) {
      pid_t r = waitpid(-1, &status, WNOHANG);
      if (r > 0) continue;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        all_done_ = true;
        return status_;
      }
      return std::nullopt;
    }
  }
  void Signal(int signal) override {
    if (!root_done_) {
      kill(pid_, signal);
      return;
    }
    // The run's process has ended: signal the processes it left here.
    for (const ProcessParent& p : MakeRealProcessTable()->ListProcesses()) {
      if (p.ppid == getpid() && p.pid != getpid()) kill(p.pid, signal);
    }
  }

 private:
  pid_t pid_;
  int output_fd_, error_fd_;
  bool root_done_ = false;
  bool all_done_ = false;
  ExitStatus status_;
};

class Foreign final : public WatchedProcess {
 public:
  explicit Foreign(pid_t pid) : pid_(pid) {}
  int pid() const override { return pid_; }
  std::optional<ExitStatus> Poll() override {
    if (kill(pid_, 0) == 0 || errno == EPERM) {
      // A zombie still answers kill(); it holds no memory and is done.
      std::string path = "/proc/" + std::to_string(pid_) + "/stat";
      if (FILE* f = std::fopen(path.c_str(), "r")) {
        char buf[512] = {0};
        size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        const char* close = std::strrchr(buf, ')');
        if (n > 0 && close && close[1] == ' ' && close[2] == 'Z') return ExitStatus{};
      }
      return std::nullopt;
    }
    return ExitStatus{};
  }
  void Signal(int signal) override { kill(pid_, signal); }

 private:
  pid_t pid_;
};

class RealClock final : public Clock {
 public:
  double NowSeconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void SleepSeconds(double seconds) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};

// A close-on-exec pipe whose read end does not block; {-1, -1} when not wanted.
struct OutputPipe {
  int read_end = -1, write_end = -1;
  void Close() {
    if (read_end >= 0) close(read_end);
    if (write_end >= 0) close(write_end);
    read_end = write_end = -1;
  }
};

}  // namespace

std::unique_ptr<Clock> MakeRealClock() { return std::make_unique<RealClock>(); }

Result<std::unique_ptr<WatchedProcess>> StartChild(const std::vector<std::string>& argv, ChildOutput output) {
  if (argv.empty()) return MakeError("no command to run");
  OutputPipe out, err;
  for (auto [wanted, p] : {std::pair{output.capture_stdout, &out}, std::pair{output.capture_stderr, &err}}) {
    int fds[2];
    if (!wanted) continue;
    if (pipe2(fds, O_CLOEXEC) != 0) {
      std::string why = std::strerror(errno);
      out.Close();
      return MakeError("pipe: " + why);
    }
    p->read_end = fds[0];
    p->write_end = fds[1];
  }
  // A close-on-exec pipe tells the parent whether exec succeeded: it is
  // closed by a successful exec, or carries errno when exec fails.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::string why = std::strerror(errno);
    out.Close();
    err.Close();
    return MakeError("pipe: " + why);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Adopt what the run leaves behind when it exits, to watch it until it ends.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    std::string why = std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    out.Close();
    err.Close();
    return MakeError("fork: " + why);
  }
  if (pid == 0) {
    close(fds[0]);
    // If oomguard dies without passing a signal on (kill -9), the run is not
    // left running unobserved: it gets SIGTERM. (Checked after the call, in
    // case the parent died before it.)
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    // dup2 clears close-on-exec on the copy. stderr first: stdout_to_stderr
    // then sends stdout into the same pipe.
    if (err.write_end >= 0) dup2(err.write_end, STDERR_FILENO);
    if (out.write_end >= 0) {
      dup2(out.write_end, STDOUT_FILENO);
    } else if (output.stdout_to_stderr) {
      dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = write(fds[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(fds[1]);
  for (OutputPipe* p : {&out, &err}) {
    if (p->write_end < 0) continue;
    close(p->write_end);
    p->write_end = -1;
    fcntl(p->read_end, F_SETFL, fcntl(p->read_end, F_GETFL) | O_NONBLOCK);
  }
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(fds[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    waitpid(pid, nullptr, 0);
    out.Close();
    err.Close();
    return MakeError("cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  return std::unique_ptr<WatchedProcess>(std::make_unique<Child>(pid, out.read_end, err.read_end));
}

Result<std::unique_ptr<WatchedProcess>> AttachToPid(int pid) {
  if (pid <= 0) return MakeError("--pid must be a positive process id, not " + std::to_string(pid));
  if (kill(pid, 0) != 0 && errno == ESRCH) return MakeError("no process with pid " + std::to_string(pid));
  return std::unique_ptr<WatchedProcess>(std::make_unique<Foreign>(pid));
}

}  // namespace oomguard::doctor
