// SPDX-License-Identifier: Apache-2.0
// The worker's seccomp filter (server/runtime/confinement.cpp), applied in a forked child that
// then makes one system call: allowed calls let it exit normally, anything else kills it with
// SIGSYS. This file sorts before pool_test.cpp, so it forks while the process has one thread.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string_view>

#include "runtime/confinement.hpp"

namespace {

// 0: the child exited normally after `call`; otherwise the signal that killed it.
int outcome_of(const std::function<void(int fd)>& call) {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  REQUIRE(::write(sv[0], "x", 1) == 1);  // something for the child to read
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    enact::runtime::isolation_report report;
    enact::runtime::confinement::lock_down(report, sv[1]);
    if (!report.seccomp)
      ::_exit(99);
    call(sv[1]);
    ::_exit(0);
  }
  ::close(sv[1]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  ::close(sv[0]);
  if (WIFEXITED(status)) {
    REQUIRE(WEXITSTATUS(status) == 0);  // 99: the filter could not be installed
    return 0;
  }
  REQUIRE(WIFSIGNALED(status));
  return WTERMSIG(status);
}

}  // namespace

TEST_CASE("confinement: the seccomp filter allows the run loop and nothing else") {
  struct case_ {
    std::string_view name;
    std::function<void(int)> call;
    int signal;  // 0: allowed
  };
  const case_ cases[] = {
      {"read on the channel",
       [](int fd) {
         char c;
         (void)::syscall(SYS_read, fd, &c, 1);
       },
       0},
      {"write on the channel", [](int fd) { (void)::syscall(SYS_write, fd, "y", 1); }, 0},
      {"anonymous memory",
       [](int) {
         (void)::syscall(SYS_mmap, nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
       },
       0},
      {"brk", [](int) { (void)::syscall(SYS_brk, 0); }, 0},
      {"clock_gettime",
       [](int) {
         timespec ts{};
         (void)::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
       },
       0},
      // SpiderMonkey seeds every new realm and reads its GC's CPU time.
      {"getrandom",
       [](int) {
         char buf[8];
         (void)::syscall(SYS_getrandom, buf, sizeof buf, 0);
       },
       0},
      {"getrusage",
       [](int) {
         rusage u{};
         (void)::syscall(SYS_getrusage, RUSAGE_SELF, &u);
       },
       0},
      {"write to stderr", [](int) { (void)::syscall(SYS_write, 2, "", 0); }, SIGSYS},
      {"read from stdin",
       [](int) {
         char c;
         (void)::syscall(SYS_read, 0, &c, 0);
       },
       SIGSYS},
      {"executable memory",
       [](int) { (void)::syscall(SYS_mmap, nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); },
       SIGSYS},
      {"mprotect to executable", [](int) { (void)::syscall(SYS_mprotect, nullptr, 0, PROT_READ | PROT_EXEC); }, SIGSYS},
      {"mprotect", [](int) { (void)::syscall(SYS_mprotect, nullptr, 0, PROT_READ); }, SIGSYS},
      {"open a file", [](int) { (void)::syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY); }, SIGSYS},
      {"create a socket", [](int) { (void)::syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); }, SIGSYS},
      {"send on the channel", [](int fd) { (void)::syscall(SYS_sendto, fd, "y", 1, 0, nullptr, 0); }, SIGSYS},
      {"getpid", [](int) { (void)::syscall(SYS_getpid); }, SIGSYS},
      {"kill", [](int) { (void)::syscall(SYS_kill, 0, 0); }, SIGSYS},
      {"execve",
       [](int) {
         const char* argv[] = {"/bin/true", nullptr};
         (void)::syscall(SYS_execve, "/bin/true", argv, nullptr);
       },
       SIGSYS},
      {"clone", [](int) { (void)::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0); }, SIGSYS},
      {"ptrace", [](int) { (void)::syscall(SYS_ptrace, 0, 0, nullptr, nullptr); }, SIGSYS},
      {"unshare", [](int) { (void)::syscall(SYS_unshare, 0); }, SIGSYS},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(outcome_of(c.call) == c.signal);
  }
}
