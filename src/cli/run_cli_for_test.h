// Test helper: runs the real oomguard binary and captures its exit status,
// stdout and stderr. Header-only; for tests of user-facing behaviour.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace oomguard::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `exe args...` with stdin from `stdin_text`; env entries "K=V" are added.
inline CliResult RunCli(const std::string& exe, const std::vector<std::string>& args,
                        const std::string& stdin_text = "", const std::vector<std::string>& env = {}) {
  char dir_template[] = "/tmp/oomguard_cli_XXXXXX";
  std::string dir = mkdtemp(dir_template);
  std::string in_path = dir + "/in", out_path = dir + "/out", err_path = dir + "/err";
  {
    std::ofstream in(in_path, std::ios::binary);
    in << stdin_text;
  }
  pid_t pid = fork();
  if (pid == 0) {
    int in_fd = open(in_path.c_str(), O_RDONLY);
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadWholeFile(out_path);
  r.err = ReadWholeFile(err_path);
  std::remove(in_path.c_str());
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(dir.c_str());
  return r;
}

}  // namespace oomguard::testing
