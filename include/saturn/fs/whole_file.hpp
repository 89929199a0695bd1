/// \file
/// Whole-file helpers: read a file into memory, write a buffer as a file. Both loop over
/// short reads/writes (a read/write may move fewer bytes than asked; these never report
/// a partial file as success) and name the path in every error.
///
/// Threading: await from a saturn task on a thread with an event loop. Cancellation: a
/// stop request ends the current ring operation with operation_canceled; write_file may
/// then have written part of the file.
#pragma once

#include <saturn/fs/fs_error.hpp>
#include <saturn/task/task.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace saturn::fs {

/// Reads all of `path` (statx for the size, then reads until end of file, so a file that
/// grows meanwhile is still read to its end). Suspends.
task<fs_result<std::vector<std::byte>>> read_file(std::string path);

/// Creates or truncates `path` (mode `mode` if created) and writes all of `data`; with
/// `sync`, fdatasync before closing. Errors name the failing step (open, write,
/// fdatasync, close) and the path. `data` must outlive the await. Suspends.
task<fs_result<void>> write_file(std::string path, std::span<const std::byte> data, unsigned mode = 0644,
                                 bool sync = false);

}  // namespace saturn::fs
