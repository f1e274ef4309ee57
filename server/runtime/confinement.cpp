// Worker confinement (see confinement.hpp). The seccomp program is hand-written classic BPF:
// libseccomp is not a dependency, and the list is short.
#include "runtime/confinement.hpp"

#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
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

// Root becomes nobody. A server that is not root cannot change its workers' uid: they would keep
// its rights (its files, its processes), so the layer is missing there.
bool drop_root(isolation_report& r) {
  if (::geteuid() != 0) {
    note(r, "not root: the worker keeps the server's uid");
    return false;
  }
  constexpr uid_t kNobody = 65534;
  if (::setgroups(0, nullptr) == 0 && ::setresgid(kNobody, kNobody, kNobody) == 0 &&
      ::setresuid(kNobody, kNobody, kNobody) == 0) {
    return true;
  }
  note(r, errno_text("dropping root"));
  return false;
}

// --- seccomp ---------------------------------------------------------------------------------

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;  // no filter on other architectures (reported)
#endif

constexpr uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(seccomp_data, arch);
// The low 32 bits of argument i (little-endian: the first word of the 64-bit slot). The
// arguments we test (fd, prot) are 32-bit in the kernel.
constexpr uint32_t arg_low(int i) { return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i); }
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "arg_low assumes little-endian");

class program {
 public:
  program() {
    load(kArchOffset);
    jump(BPF_JEQ, kAuditArch, 1, 0);
    kill();
    load(kNrOffset);
#if defined(__x86_64__)
    jump(BPF_JGE, 0x40000000u, 0, 1);  // the x32 ABI's numbers: refused
    kill();
#endif
  }

  void allow(uint32_t nr) {
    jump(BPF_JEQ, nr, 0, 1);
    ret(SECCOMP_RET_ALLOW);
  }
  // Allowed only when argument `arg` equals `value`.
  void allow_if_arg(uint32_t nr, int arg, uint32_t value) {
    jump(BPF_JEQ, nr, 0, 4);  // other calls skip the block with A still holding nr
    load(arg_low(arg));
    jump(BPF_JEQ, value, 0, 1);
    ret(SECCOMP_RET_ALLOW);
    kill();
  }
  // Allowed only when argument `arg` has none of the bits in `mask`.
  void allow_unless_bits(uint32_t nr, int arg, uint32_t mask) {
    jump(BPF_JEQ, nr, 0, 4);
    load(arg_low(arg));
    jump(BPF_JSET, mask, 1, 0);
    ret(SECCOMP_RET_ALLOW);
    kill();
  }
  void finish() { kill(); }

  [[nodiscard]] sock_fprog fprog() { return sock_fprog{static_cast<unsigned short>(code_.size()), code_.data()}; }

 private:
  void load(uint32_t offset) { code_.push_back(sock_filter BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void jump(uint16_t op, uint32_t k, uint8_t jt, uint8_t jf) {
    code_.push_back(sock_filter BPF_JUMP(BPF_JMP | op | BPF_K, k, jt, jf));
  }
  void ret(uint32_t action) { code_.push_back(sock_filter BPF_STMT(BPF_RET | BPF_K, action)); }
  void kill() { ret(SECCOMP_RET_KILL_PROCESS); }

  std::vector<sock_filter> code_;
};

bool install_filter(int channel_fd, std::string& why) {
  if (kAuditArch == 0) {
    why = "seccomp: no filter for this architecture";
    return false;
  }
  program p;
  // The run loop: frames on the channel, and nothing else that reaches outside the process.
  p.allow_if_arg(SYS_read, 0, static_cast<uint32_t>(channel_fd));
  p.allow_if_arg(SYS_write, 0, static_cast<uint32_t>(channel_fd));
  // Memory: malloc and Duktape's heap (strace of the test suite's runs shows brk, mmap, munmap
  // and mremap; madvise and futex are glibc's when it trims or locks). No executable mappings,
  // and no mprotect at all: nothing in a run changes the protection of a mapping.
  p.allow(SYS_brk);
  p.allow_unless_bits(SYS_mmap, 2, PROT_EXEC);
  p.allow(SYS_munmap);
  p.allow(SYS_mremap);
  p.allow(SYS_madvise);
  p.allow(SYS_futex);
  // Clocks: the deadline, Date.now(), performance.now(), when the vDSO falls back to a call.
  p.allow(SYS_clock_gettime);
#if defined(SYS_gettimeofday)
  p.allow(SYS_gettimeofday);
#endif
  // Signal return, restarts after a stop, and exit.
  p.allow(SYS_rt_sigreturn);
  p.allow(SYS_restart_syscall);
  p.allow(SYS_exit);
  p.allow(SYS_exit_group);
  p.finish();

  sock_fprog prog = p.fprog();
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
    return true;
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
    return true;
  why = errno_text("seccomp");
  return false;
}

}  // namespace

void prepare(isolation_report& r, int channel_fd, size_t address_space_bytes, std::string_view skip) {
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

  if (!skipped(r, skip, "network_namespace"))
    r.network_namespace = own_network_namespace(r);

  if (!skipped(r, skip, "dropped_privileges"))
    r.dropped_privileges = drop_root(r);

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
