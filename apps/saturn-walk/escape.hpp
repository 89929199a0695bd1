// Names as saturn-walk prints them in messages: one line per message whatever the bytes.
#pragma once

#include <string>
#include <string_view>

namespace walk {

/// `name` with control characters and bytes that are not valid UTF-8 escaped, so that a
/// message stays one readable line: \a \b \t \n \v \f \r and \\ as in C, any other
/// control character (C0, DEL, C1) and every byte of an invalid or overlong sequence as
/// three octal digits (\377), like find's messages. Valid UTF-8 text is left alone.
/// Pure function: any thread.
std::string escape_name(std::string_view name);

}  // namespace walk
