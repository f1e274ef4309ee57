// SPDX-License-Identifier: Apache-2.0
// Allocation accounting and the execution deadline for Duktape heaps (see engine.hpp).
#include "runtime/engine.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace enact::runtime::engine {
namespace {

// Each block carries its payload size in front, so realloc and free can keep the count exact
// without asking malloc. 16 bytes keeps the payload as aligned as malloc's own result.
constexpr size_t kHeader = 16;

// Counts `bytes` more against the limit; false (and the heap marked exhausted) when over it.
bool reserve(heap_guard* g, size_t bytes) noexcept {
  if (g == nullptr)
    return true;
  if (g->heap_limit != 0 && bytes > g->heap_limit - g->heap_used) {
    g->heap_exhausted = true;
    return false;
  }
  g->heap_used += bytes;
  return true;
}

void release(heap_guard* g, size_t bytes) noexcept {
  if (g != nullptr)
    g->heap_used -= bytes;
}

size_t block_size(void* payload) noexcept {
  size_t n;
  std::memcpy(&n, static_cast<char*>(payload) - kHeader, sizeof n);
  return n;
}

void* finish(void* block, size_t size) noexcept {
  std::memcpy(block, &size, sizeof size);
  return static_cast<char*>(block) + kHeader;
}

void* guarded_alloc(void* udata, duk_size_t size) {
  auto* g = static_cast<heap_guard*>(udata);
  if (size == 0)
    return nullptr;  // allowed by Duktape's allocator contract
  if (size > SIZE_MAX - kHeader) {
    if (g != nullptr)
      g->heap_exhausted = true;
    return nullptr;
  }
  if (!reserve(g, kHeader + size))
    return nullptr;
  void* block = std::malloc(kHeader + size);
  if (block == nullptr) {
    release(g, kHeader + size);
    if (g != nullptr)
      g->heap_exhausted = true;
    return nullptr;
  }
  return finish(block, size);
}

void guarded_free(void* udata, void* ptr) {
  if (ptr == nullptr)
    return;
  release(static_cast<heap_guard*>(udata), kHeader + block_size(ptr));
  std::free(static_cast<char*>(ptr) - kHeader);
}

void* guarded_realloc(void* udata, void* ptr, duk_size_t size) {
  auto* g = static_cast<heap_guard*>(udata);
  if (ptr == nullptr)
    return guarded_alloc(udata, size);
  if (size == 0) {
    guarded_free(udata, ptr);
    return nullptr;
  }
  if (size > SIZE_MAX - kHeader) {
    if (g != nullptr)
      g->heap_exhausted = true;
    return nullptr;
  }
  const size_t old = block_size(ptr);
  const size_t growth = size > old ? size - old : 0;
  if (!reserve(g, growth))
    return nullptr;
  void* block = std::realloc(static_cast<char*>(ptr) - kHeader, kHeader + size);
  if (block == nullptr) {
    release(g, growth);
    if (g != nullptr)
      g->heap_exhausted = true;
    return nullptr;  // the old block stays valid, as Duktape expects
  }
  if (size < old)
    release(g, old - size);
  return finish(block, size);
}

}  // namespace

int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

duk_context* create_heap(heap_guard* guard, duk_fatal_function fatal) noexcept {
  return duk_create_heap(guarded_alloc, guarded_realloc, guarded_free, guard, fatal);
}

}  // namespace enact::runtime::engine

// DUK_USE_EXEC_TIMEOUT_CHECK (declared in our duk_config.h). `udata` is the heap's user data:
// a heap_guard, or null for a heap created without one.
extern "C" int enact_duk_exec_timeout_check(void* udata) {
  auto* g = static_cast<enact::runtime::engine::heap_guard*>(udata);
  if (g == nullptr)
    return 0;
  if (g->timed_out || g->halted)
    return 1;
  if (g->deadline_ns != 0 && enact::runtime::engine::monotonic_ns() >= g->deadline_ns) {
    g->timed_out = true;
    return 1;
  }
  return 0;
}
