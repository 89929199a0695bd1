/// \file
/// `when_any`: run tasks concurrently; the first to finish wins, the others are cancelled.
///
/// ```
/// auto r = co_await saturn::when_any(read_reply(fd), give_up_after(100ms));
/// if (r.index() == 0) use(std::get<0>(r));             // the read won; the timer was cancelled
///
/// auto [index, value] = co_await saturn::when_any(std::move(mirrors));  // vector form
/// ```
///
/// The winner is the first child to *end*, with a value or with an exception. As soon as
/// it has ended, the others (the losers) are cancelled through the when_any's own stop
/// source (chained to the awaiter's token): their sleeps end, their in-flight io_uring
/// operations get an ASYNC_CANCEL. when_any then waits until every loser has really
/// ended — its I/O completed in the kernel, its frame no longer running — before it
/// returns. What a loser ends with (a value that made it anyway, an operation_canceled
/// error, an exception) is discarded.
#pragma once

#include <saturn/task/detail/fan_in.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace saturn {

namespace detail {
/// Builds the variant alternative of the winner (runtime index → compile-time index).
template <class V, std::size_t I = 0, class Tuple>
V take_winner(Tuple& children, std::size_t winner) {
  if constexpr (I + 1 < std::tuple_size_v<Tuple>) {
    if (winner != I)
      return take_winner<V, I + 1>(children, winner);
  }
  return V(std::in_place_index<I>, take_child_value(std::get<I>(children)));
}
}  // namespace detail

/// The outcome of `when_any(std::vector<task<T>>)`: which child won and its value
/// (std::monostate for T = void, std::reference_wrapper<T> for T&).
template <class T>
struct when_any_result {
  std::size_t index;
  detail::child_value_t<T> value;
};

/// Runs every child concurrently and returns the first to finish as a variant whose
/// index() is the winner's position — also when several children share a type
/// (`std::variant<int, int>`). void → std::monostate, T& → std::reference_wrapper<T>.
///
/// Threading: await from a saturn task (the children run on its scheduler, possibly on
/// other workers). Suspends until the winner has ended and every loser has ended too.
/// Cancellation: losers are cancelled as soon as the winner ends; a stop of the awaiter's
/// token cancels all children, and whichever then ends first still wins (usually with an
/// operation_canceled error of its own). Exceptions: a winner's exception is rethrown
/// (after the losers have ended); losers' exceptions are dropped. Throws
/// std::invalid_argument for an empty task (nothing is started then).
template <class... Ts>
task<std::variant<detail::child_value_t<Ts>...>> when_any(task<Ts>... children) {
  static_assert(sizeof...(Ts) > 0, "saturn::when_any needs at least one task: with none there is no winner");
  task_context& parent = co_await this_task::context();
  detail::fan_in scope(parent, detail::fan_in::stop_when::first_completion);
  std::array<detail::child_driver, sizeof...(Ts)> drivers =
      detail::adopt_all(scope, "when_any", std::index_sequence_for<Ts...>{}, children...);
  co_await scope.run_all(drivers);
  auto refs = std::forward_as_tuple(children...);
  co_return detail::take_winner<std::variant<detail::child_value_t<Ts>...>>(refs, scope.first());
}

/// Runs every task of `children` concurrently; returns the first to finish and its index
/// in the vector. Same threading, cancellation and exception contract as the variadic
/// form. Throws std::invalid_argument for an empty vector (there would be no winner).
template <class T>
task<when_any_result<T>> when_any(std::vector<task<T>> children) {
  if (children.empty())
    throw std::invalid_argument("when_any: the vector of tasks is empty, so there is no winner; pass at least one");
  task_context& parent = co_await this_task::context();
  detail::fan_in scope(parent, detail::fan_in::stop_when::first_completion);
  std::vector<detail::child_driver> drivers;
  drivers.reserve(children.size());
  for (std::size_t i = 0; i < children.size(); ++i)
    drivers.push_back(scope.adopt(children[i], i, "when_any"));
  co_await scope.run_all(drivers);
  const std::size_t winner = scope.first();
  co_return when_any_result<T>{winner, detail::take_child_value(children[winner])};
}

}  // namespace saturn
