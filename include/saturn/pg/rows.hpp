/// \file
/// Query results: `rows` (every row of a result, owned) and `row` (a view of one row).
///
/// ```
/// auto r = co_await conn.query("SELECT id, name FROM items WHERE id = $1", 7);
/// for (pg::row row : *r) {
///   auto id = row.get<std::int32_t>(0);                  // pg::result<std::int32_t>
///   auto name = row.get<std::optional<std::string>>(1);  // NULL -> std::nullopt
/// }
/// ```
///
/// Threading: plain values; a row views the rows (or the stream buffer) it came from and is
/// valid while that lives (for a streamed row: during the callback only).
#pragma once

#include <saturn/pg/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace saturn::pg {

namespace detail {
/// Where a value lies within a DataRow body (offset from base; size -1 for NULL).
struct cell {
  std::uint32_t offset = 0;
  std::int32_t size = -1;
};
}  // namespace detail

/// One row: its columns' values, read with get<T>(i).
class row {
 public:
  row(const std::vector<column>* cols, const char* base, const detail::cell* cells) noexcept
      : m_cols(cols), m_base(base), m_cells(cells) {}
  /// Number of columns.
  std::size_t size() const noexcept { return m_cols->size(); }
  /// Column i's raw value (i < size()).
  field at(std::size_t i) const noexcept {
    return field{&(*m_cols)[i], m_base + m_cells[i].offset, m_cells[i].size};
  }
  bool is_null(std::size_t i) const noexcept { return m_cells[i].size < 0; }
  /// Column i converted to T (types.hpp's table); errc::type for an index out of range.
  template <class T>
  result<T> get(std::size_t i) const {
    if (i >= size())
      return index_error(i);
    return detail::decode<T>(at(i));
  }
  const std::vector<column>& columns() const noexcept { return *m_cols; }

 private:
  error index_error(std::size_t i) const;
  const std::vector<column>* m_cols;
  const char* m_base;
  const detail::cell* m_cells;
};

/// Every row of one result, plus its command tag ("SELECT 3", "UPDATE 1").
///
/// Storage: a result's values are kept in two buffers. When a rows is destroyed, buffers
/// of 64 KiB to 32 MiB become the destroying thread's spare (the larger of the two it
/// has), and the next result read on that thread that outgrows its own buffers moves into
/// them: a service that fetches big results over and over does not give the memory back
/// to the kernel and fault it in again each time, and a small result never holds a big
/// spare. release_spare_storage() frees the calling thread's spare.
class rows {
 public:
  rows() = default;
  rows(const rows&) = default;
  rows(rows&&) noexcept = default;
  rows& operator=(const rows&) = default;
  rows& operator=(rows&&) noexcept = default;
  ~rows();
  std::size_t size() const noexcept { return m_count; }
  bool empty() const noexcept { return m_count == 0; }
  row operator[](std::size_t i) const noexcept {
    return row(m_cols.get(), m_data.data(), m_cells.data() + i * m_cols->size());
  }
  /// The columns (empty for a command without a result).
  const std::vector<column>& columns() const noexcept { return *m_cols; }
  /// The command tag of CommandComplete.
  const std::string& command_tag() const noexcept { return m_tag; }
  /// Rows affected (the tag's last number: INSERT/UPDATE/DELETE/SELECT/COPY...), 0 if none.
  std::uint64_t affected() const noexcept;

  class iterator {
   public:
    iterator(const rows* r, std::size_t i) noexcept : m_r(r), m_i(i) {}
    row operator*() const noexcept { return (*m_r)[m_i]; }
    iterator& operator++() noexcept {
      ++m_i;
      return *this;
    }
    bool operator!=(const iterator& o) const noexcept { return m_i != o.m_i; }

   private:
    const rows* m_r;
    std::size_t m_i;
  };
  iterator begin() const noexcept { return {this, 0}; }
  iterator end() const noexcept { return {this, m_count}; }

  // Filled by the connection.
  std::shared_ptr<const std::vector<column>> m_cols = std::make_shared<const std::vector<column>>();
  std::string m_data;
  std::vector<detail::cell> m_cells;
  std::size_t m_count = 0;
  std::string m_tag;
};

/// Frees the calling thread's spare result storage (see rows). Threading: affects the
/// calling thread only; safe to call at any time.
void release_spare_storage() noexcept;

namespace detail {
/// Before `r` grows by `more_data` bytes and `more_cells` cells: moves each of its buffers
/// that would have to grow into this thread's spare when the spare is big enough (the
/// connection, while reading a result).
void grow_into_spare(rows& r, std::size_t more_data, std::size_t more_cells) noexcept;
/// Bytes of spare storage the calling thread holds (tests).
std::size_t spare_storage_bytes() noexcept;
}  // namespace detail

}  // namespace saturn::pg
