/// \file
/// `loop_exit_hook`: something that must let go of a loop when the loop is destroyed (a
/// socket's multishot receive living on it, holding the loop's receive buffers). The
/// loop's destructor calls every registered hook after its last operation completed and
/// before its buffer rings are freed.
#pragma once

#include <saturn/loop/event_loop.hpp>

namespace saturn {

/// An intrusive node on a loop's exit-hook list. Threading: registered, removed and
/// called on the loop's thread only; `m_on_loop_exit` runs inside ~event_loop and must not
/// submit operations or suspend.
struct loop_exit_hook {
  using fn_type = void (*)(loop_exit_hook* self) noexcept;
  loop_exit_hook* m_prev_hook = nullptr;
  loop_exit_hook* m_next_hook = nullptr;
  fn_type m_on_loop_exit = nullptr;
};

namespace ext {

/// Registers `h` on `loop`: the loop's destructor calls h->m_on_loop_exit after every
/// operation has completed and before the buffer rings go. `h` must not be registered
/// already. Loop thread only; O(1), allocates nothing.
inline void add_exit_hook(event_loop& loop, loop_exit_hook* h) noexcept {
  loop_exit_hook*& head = detail::loop_internals::exit_hooks(loop);
  h->m_prev_hook = nullptr;
  h->m_next_hook = head;
  if (head != nullptr)
    head->m_prev_hook = h;
  head = h;
}

/// Unregisters `h` (it must be registered on `loop`). Loop thread only; O(1).
inline void remove_exit_hook(event_loop& loop, loop_exit_hook* h) noexcept {
  if (h->m_prev_hook != nullptr)
    h->m_prev_hook->m_next_hook = h->m_next_hook;
  else
    detail::loop_internals::exit_hooks(loop) = h->m_next_hook;
  if (h->m_next_hook != nullptr)
    h->m_next_hook->m_prev_hook = h->m_prev_hook;
  h->m_prev_hook = h->m_next_hook = nullptr;
}

}  // namespace ext
}  // namespace saturn
