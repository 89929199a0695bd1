// wrap: function
#include <saturn/fs.hpp>
#include <cstddef>
#include <string_view>
namespace fs = saturn::fs;
inline int fd = 3;
void use(std::string_view name);
