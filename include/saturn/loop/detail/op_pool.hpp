/// \file
/// Per-loop recycling allocator for callback-tier operation objects: four size classes
/// (32, 64, 128 and 256 bytes)
/// with intrusive free lists, carved from 64 KiB chunks. Allocating and freeing is a
/// pointer pop/push (no lock: single-threaded), so submitting an operation with a
/// callable allocates nothing from malloc in steady state. Larger objects fall back to
/// operator new.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace saturn::detail {

/// Threading: single-threaded (the owning loop's thread).
class op_pool {
 public:
  op_pool() = default;
  op_pool(const op_pool&) = delete;
  op_pool& operator=(const op_pool&) = delete;
  ~op_pool() {
    for (void* c : m_chunks)
      ::operator delete(c, std::align_val_t{64});
  }

  /// Memory for an object of `size` bytes aligned to `align` (over 64: operator new).
  void* allocate(std::size_t size, std::size_t align = 64) {
    const int cls = align > 64 ? -1 : size_class(size);
    if (cls < 0)
      return ::operator new(size, std::align_val_t{align > 64 ? align : 64});
    free_node*& head = m_free[cls];
    if (head == nullptr) [[unlikely]]
      refill(cls);
    free_node* n = head;
    head = n->next;
    return n;
  }

  void deallocate(void* p, std::size_t size, std::size_t align = 64) noexcept {
    const int cls = align > 64 ? -1 : size_class(size);
    if (cls < 0) {
      ::operator delete(p, std::align_val_t{align > 64 ? align : 64});
      return;
    }
    auto* n = static_cast<free_node*>(p);
    n->next = m_free[cls];
    m_free[cls] = n;
  }

 private:
  struct free_node {
    free_node* next;
  };
  static constexpr std::size_t k_sizes[4] = {32, 64, 128, 256};
  static constexpr std::size_t k_chunk = 64 * 1024;

  static int size_class(std::size_t size) noexcept {
    for (int i = 0; i < 4; ++i)
      if (size <= k_sizes[i])
        return i;
    return -1;
  }

  void refill(int cls) {
    char* chunk = static_cast<char*>(::operator new(k_chunk, std::align_val_t{64}));
    m_chunks.push_back(chunk);
    const std::size_t sz = k_sizes[cls];
    for (std::size_t off = 0; off + sz <= k_chunk; off += sz) {
      auto* n = reinterpret_cast<free_node*>(chunk + off);
      n->next = m_free[cls];
      m_free[cls] = n;
    }
  }

  free_node* m_free[4] = {nullptr, nullptr, nullptr, nullptr};
  std::vector<void*> m_chunks;
};

}  // namespace saturn::detail
