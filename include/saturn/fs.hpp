/// \file
/// Files on the ring: fs::file, whole-file helpers, directory listing, and fs_error (an
/// error that names the path).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/fs/dir_reader.hpp>
#include <saturn/fs/file.hpp>
#include <saturn/fs/fs_error.hpp>
#include <saturn/fs/walk.hpp>
#include <saturn/fs/whole_file.hpp>
