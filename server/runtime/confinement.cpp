// SPDX-License-Identifier: Apache-2.0
// Worker confinement (see confinement.hpp). The seccomp filter is built with libseccomp, which
// compiles the allow-list below into the kernel's BPF for the native architecture.
#include "runtime/confinement.hpp"

#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace enact::runtime::confinement {
namespace {

void note(isolation_report& r, const std::string& what) {
  if (!r.notes.empty())
    r.notes += "; ";
  r.notes += what;
}

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// The test hook: `layer` is left out on purpose when it is the one asked for, and says so.
bool skipped(isolation_report& r, std::string_view skip, std::string_view layer) {
  if (skip != layer)
    return false;
  note(r, std::string(layer) + ": left out on purpose (test hook)");
  return true;
}

bool close_all_but(int keep) {
  const auto ukeep = static_cast<unsigned>(keep);
  if (::close_range(0, ukeep - 1, 0) == 0 && ::close_range(ukeep + 1, ~0U, 0) == 0)
    return true;
  if (errno != ENOSYS)
    return false;
  for (int fd = 0; fd < 65536; ++fd) {
    if (fd != keep)
      ::close(fd);
  }
  return true;
}

bool set_limit(int resource, rlim_t value) {
  const rlimit l{value, value};
  return ::setrlimit(resource, &l) == 0;
}

// A network namespace of its own: no interfaces but a loopback that is down. Without
// CAP_SYS_ADMIN, a user namespace may grant it.
bool own_network_namespace(isolation_report& r) {
  if (::unshare(CLONE_NEWNET) == 0)
    return true;
  const std::string first = errno_text("unshare(CLONE_NEWNET)");
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0)
    return true;
  note(r, first + ", " + errno_text("unshare(CLONE_NEWUSER|CLONE_NEWNET)"));
  return false;
}

// Clears every capability the worker still holds. A root process that becomes nobody loses them
// in the kernel; a server started as its own user with CAP_SETUID and CAP_SETGID (the packaged
// systemd unit's AmbientCapabilities) keeps them across its uid change, and would keep the power
// to change uid back.
bool clear_capabilities(isolation_report& r) {
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    note(r, errno_text("prctl(PR_CAP_AMBIENT_CLEAR_ALL)"));
    return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, data) != 0 || ::syscall(SYS_capget, &header, data) != 0) {
    note(r, errno_text("capset"));
    return false;
  }
  for (const auto& d : data) {
    if (d.effective != 0 || d.permitted != 0 || d.inheritable != 0) {
      note(r, "capabilities left after capset");
      return false;
    }
  }
  return true;
}

// The worker becomes nobody: from root, or from a server user holding CAP_SETUID and CAP_SETGID.
// A server without them cannot change its workers' uid: they would keep its rights (its files,
// its processes), so the layer is missing there.
bool drop_root(isolation_report& r) {
  constexpr uid_t kNobody = 65534;
  if (::setgroups(0, nullptr) == 0 && ::setresgid(kNobody, kNobody, kNobody) == 0 &&
      ::setresuid(kNobody, kNobody, kNobody) == 0) {
    return clear_capabilities(r);
  }
  if (::geteuid() != 0)
    note(r, "not root and without CAP_SETUID and CAP_SETGID: the worker keeps the server's uid");
  else
    note(r, errno_text("dropping root"));
  return false;
}

// --- seccomp ---------------------------------------------------------------------------------

/// The filter under construction; released however install_filter returns.
struct filter_context {
  scmp_filter_ctx ctx;
  explicit filter_context(uint32_t default_action) : ctx(::seccomp_init(default_action)) {}
  ~filter_context() {
    if (ctx != nullptr)
      ::seccomp_release(ctx);
  }
  filter_context(const filter_context&) = delete;
  filter_context& operator=(const filter_context&) = delete;
};

std::string seccomp_error(const char* call, int rc) { return std::string(call) + ": " + std::strerror(-rc); }

bool install_filter(int channel_fd, std::string& why) {
  // Anything not allowed below kills the whole process (SIGSYS). The filter is for the native
  // architecture only: a call made through another ABI (32-bit int 0x80 on x86_64, or x32's
  // numbers, which libseccomp tells apart) is refused the same way.
  filter_context f(SCMP_ACT_KILL_PROCESS);
  if (f.ctx == nullptr) {
    why = "seccomp_init: failed";
    return false;
  }
  int rc = ::seccomp_attr_set(f.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  // Every thread gets the filter (SpiderMonkey's helper threads and watchdog are running).
  if (rc == 0)
    rc = ::seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc != 0) {
    why = seccomp_error("seccomp_attr_set", rc);
    return false;
  }
  // Argument checks (scmp_arg_cmp built directly: libseccomp's SCMP_A* macros are C compound
  // literals). The whole 64-bit argument is compared, so an fd or prot with high bits set is refused.
  const auto equals = [](unsigned arg, uint64_t value) {
    return scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0};
  };
  const auto has_none_of = [](unsigned arg, uint64_t mask) {
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, 0};
  };
  const auto fd = static_cast<uint64_t>(channel_fd);
  struct rule {
    int nr;
    std::vector<scmp_arg_cmp> args;
  };
  const rule rules[] = {
    // The run loop: frames on the channel, and nothing else that reaches outside the process.
    {SCMP_SYS(read), {equals(0, fd)}},
    {SCMP_SYS(write), {equals(0, fd)}},
    // Memory: malloc and Duktape's heap (strace of the test suite's runs shows brk, mmap, munmap
    // and mremap; madvise and futex are glibc's when it trims or locks). No executable mappings,
    // and no mprotect at all: nothing in a run changes the protection of a mapping.
    {SCMP_SYS(brk), {}},
    {SCMP_SYS(mmap), {has_none_of(2, PROT_EXEC)}},
    {SCMP_SYS(munmap), {}},
    {SCMP_SYS(mremap), {}},
    {SCMP_SYS(madvise), {}},
    {SCMP_SYS(futex), {}},
    // Clocks: the deadline, Date.now(), performance.now(), when the vDSO falls back to a call.
    {SCMP_SYS(clock_gettime), {}},
#if defined(SYS_gettimeofday)
    {SCMP_SYS(gettimeofday), {}},
#endif
    // SpiderMonkey: random seeds of each new realm (Math.random, hash codes), and the CPU time its
    // garbage collector's statistics read. Neither reaches outside the process.
    {SCMP_SYS(getrandom), {}},
    {SCMP_SYS(getrusage), {}},
    // A thread started just before the filter registers itself with the C library's first steps
    // (its robust futex list and restartable sequences): both concern only the calling thread.
    {SCMP_SYS(set_robust_list), {}},
#if defined(SYS_rseq)
    {SCMP_SYS(rseq), {}},
#endif
    // Signal return, restarts after a stop, and exit.
    {SCMP_SYS(rt_sigreturn), {}},
    {SCMP_SYS(restart_syscall), {}},
    {SCMP_SYS(exit), {}},
    {SCMP_SYS(exit_group), {}},
  };
  for (const auto& r : rules) {
    rc = ::seccomp_rule_add_array(f.ctx, SCMP_ACT_ALLOW, r.nr, static_cast<unsigned>(r.args.size()),
                                  r.args.empty() ? nullptr : r.args.data());
    if (rc != 0) {
      char* name = ::seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r.nr);
      why = seccomp_error("seccomp_rule_add", rc) + " (" + (name != nullptr ? name : std::to_string(r.nr)) + ")";
      std::free(name);
      return false;
    }
  }
  rc = ::seccomp_load(f.ctx);
  if (rc != 0) {
    why = seccomp_error("seccomp", rc);
    return false;
  }
  return true;
}

}  // namespace

void prepare(isolation_report& r, int channel_fd, size_t address_space_bytes, std::string_view skip,
             const std::function<void()>& before_limits) {
  if (!skipped(r, skip, "empty_environment")) {
    r.empty_environment = environ == nullptr || environ[0] == nullptr;
    if (!r.empty_environment)
      note(r, "environment not empty");
  }

  if (!skipped(r, skip, "fds_closed")) {
    r.fds_closed = close_all_but(channel_fd);
    if (!r.fds_closed)
      note(r, errno_text("close_range"));
  }

  // Root makes the network namespace first (CAP_SYS_ADMIN), then becomes nobody. A server user
  // with only CAP_SETUID and CAP_SETGID becomes nobody first: the namespace then comes with a user
  // namespace of nobody's, where an unmapped uid could not be changed any more.
  const bool drop_first = ::geteuid() != 0;
  if (drop_first && !skipped(r, skip, "dropped_privileges"))
    r.dropped_privileges = drop_root(r);

  if (!skipped(r, skip, "network_namespace"))
    r.network_namespace = own_network_namespace(r);

  if (!drop_first && !skipped(r, skip, "dropped_privileges"))
    r.dropped_privileges = drop_root(r);

  if (before_limits)
    before_limits();

  if (!skipped(r, skip, "rlimits")) {
    bool limits = true;
#if defined(__SANITIZE_ADDRESS__)
    note(r, "RLIMIT_AS not set under AddressSanitizer");
    (void)address_space_bytes;
#else
    limits &= set_limit(RLIMIT_AS, address_space_bytes);
#endif
    limits &= set_limit(RLIMIT_NOFILE, static_cast<rlim_t>(channel_fd) + 1);
    limits &= set_limit(RLIMIT_NPROC, 0);
    limits &= set_limit(RLIMIT_FSIZE, 0);
    limits &= set_limit(RLIMIT_CORE, 0);
    r.rlimits = limits;
    if (!limits)
      note(r, errno_text("setrlimit"));
  }
}

void lock_down(isolation_report& r, int channel_fd, std::string_view skip) {
  r.no_new_privs = !skipped(r, skip, "no_new_privs") && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
  if (!r.no_new_privs) {
    if (skip != "no_new_privs")
      note(r, errno_text("PR_SET_NO_NEW_PRIVS"));
    note(r, "seccomp: not without no_new_privs");
    return;  // the kernel refuses an unprivileged filter without it
  }
  if (skipped(r, skip, "seccomp"))
    return;
  std::string why;
  r.seccomp = install_filter(channel_fd, why);
  if (!r.seccomp)
    note(r, why);
}

}  // namespace enact::runtime::confinement
