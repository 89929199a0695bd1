/// \file
/// Mailbox nodes: one allocation per message, linked intrusively. A user message is a
/// msg_node<Msg>; exit signals, down messages and receive time-outs are sys_nodes (they
/// are produced by code that does not know the receiver's message type).
#pragma once

#include <saturn/proc/pid.hpp>
#include <saturn/task/frame_allocator.hpp>

#include <cstdint>
#include <utility>

namespace saturn::detail {

enum class node_kind : std::uint32_t {
  user,         ///< msg_node<Msg>
  exit_signal,  ///< a linked process ended (or kill()): sys_node
  down,         ///< a monitored process ended: sys_node
  timeout,      ///< a timed receive's deadline passed: sys_node, m_seq names the receive
};

/// The header every mailbox node starts with (16 bytes).
struct node_base {
  node_base* m_next = nullptr;
  node_kind m_kind = node_kind::user;
  /// timeout: the number of the receive it ends. user: 1 if converted from a signal
  /// (such a message was never counted against a bounded mailbox).
  std::uint32_t m_seq = 0;
};

/// A user message. Allocated from the frame allocator (a per-thread size class).
template <class Msg>
struct msg_node final : node_base {
  Msg m_value;
  template <class... A>
  explicit msg_node(A&&... a) : m_value(std::forward<A>(a)...) {}
  static void* operator new(std::size_t n) { return frame_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
};

/// sys_node::m_seq of an exit signal sent by kill() with exit_kind::killed: it cannot be
/// trapped (the reason `killed` it then spreads through links can).
inline constexpr std::uint32_t exit_untrappable = 1;

/// A system message (exit signal, down, time-out).
struct sys_node final : node_base {
  pid m_from;
  exit_reason m_reason;
  monitor_ref m_ref = 0;
  static void* operator new(std::size_t n) { return frame_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
};

/// Frees a node of a process whose message type is Msg.
template <class Msg>
void free_node(node_base* n) noexcept {
  if (n->m_kind == node_kind::user)
    delete static_cast<msg_node<Msg>*>(n);
  else
    delete static_cast<sys_node*>(n);
}

}  // namespace saturn::detail
