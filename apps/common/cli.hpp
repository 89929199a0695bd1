// Command-line helpers shared by the servers (CLI11).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace apps {

/// A transform for integer options: the value must be written in decimal digits only
/// (CLI11 would read "0112201" as octal and "0x94A9" as hex); leading zeros are dropped
/// so "0080" is 80. Runs before the option's range check.
inline CLI::Validator decimal() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
          return "'" + s + "' is not a decimal number";
        const std::size_t nz = s.find_first_not_of('0');
        s = nz == std::string::npos ? "0" : s.substr(nz);
        return {};
      },
      "DECIMAL");
}

}  // namespace apps
