/// \file
/// `when_all`: run tasks concurrently and wait for every one of them.
///
/// ```
/// auto [user, orders] = co_await saturn::when_all(load_user(id), load_orders(id));
/// std::vector<std::size_t> sizes = co_await saturn::when_all(std::move(reads));
/// ```
///
/// The children are started together (each queued on the awaiter's scheduler, so they
/// interleave, and a work-stealing scheduler may run them in parallel) under a stop source
/// of the when_all's own, chained to the awaiter's token. If a child throws, the others
/// are cancelled through that source, every child is awaited until it has really ended
/// (in-flight I/O completed), and then the first exception — the first by completion, not
/// by position — is rethrown; the others' exceptions are dropped.
///
/// Errors returned as values (saturn::result) are values: they do not cancel the others.
#pragma once

#include <saturn/task/detail/fan_in.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace saturn {

namespace detail {
template <class T>
struct when_all_vector {
  using type = std::vector<child_value_t<T>>;
};
template <>
struct when_all_vector<void> {
  using type = void;
};
}  // namespace detail

/// What `when_all(std::vector<task<T>>)` produces: std::vector<T>, or void for T = void
/// (a reference T& is collected as std::reference_wrapper<T>).
template <class T>
using when_all_vector_t = typename detail::when_all_vector<T>::type;

/// Runs every child concurrently and returns their values in argument order, as a tuple.
/// A child of type task<void> contributes a std::monostate (so positions never shift); a
/// task<T&> contributes a std::reference_wrapper<T>. when_all() of nothing is an empty
/// tuple, at once.
///
/// Threading: await from a saturn task (the children run on its scheduler, possibly on
/// other workers). Suspends until every child has ended. Cancellation: a stop of the
/// awaiter's token reaches every child (their awaits end with operation_canceled); the
/// children's results, whatever they are, are then returned as usual. Exceptions: the
/// first child to throw cancels the rest; once all have ended, that exception is
/// rethrown. Throws std::invalid_argument for an empty task (nothing is started then).
template <class... Ts>
task<std::tuple<detail::child_value_t<Ts>...>> when_all(task<Ts>... children) {
  task_context& parent = co_await this_task::context();
  detail::fan_in scope(parent, detail::fan_in::stop_when::first_failure);
  std::array<detail::child_driver, sizeof...(Ts)> drivers =
      detail::adopt_all(scope, "when_all", std::index_sequence_for<Ts...>{}, children...);
  co_await scope.run_all(drivers);
  scope.rethrow_first_failure();
  // Braced initialization: the values are taken in argument order.
  co_return std::tuple<detail::child_value_t<Ts>...>{detail::take_child_value(children)...};
}

/// Runs every task of `children` concurrently; returns their values in the vector's order
/// (nothing for task<void>). An empty vector gives an empty result at once. Same
/// threading, cancellation and exception contract as the variadic form.
template <class T>
task<when_all_vector_t<T>> when_all(std::vector<task<T>> children) {
  task_context& parent = co_await this_task::context();
  detail::fan_in scope(parent, detail::fan_in::stop_when::first_failure);
  std::vector<detail::child_driver> drivers;
  drivers.reserve(children.size());
  for (std::size_t i = 0; i < children.size(); ++i)
    drivers.push_back(scope.adopt(children[i], i, "when_all"));
  co_await scope.run_all(drivers);
  scope.rethrow_first_failure();
  if constexpr (std::is_void_v<T>) {
    co_return;
  } else {
    when_all_vector_t<T> out;
    out.reserve(children.size());
    for (task<T>& c : children)
      out.push_back(detail::take_child_value(c));
    co_return out;
  }
}

}  // namespace saturn
