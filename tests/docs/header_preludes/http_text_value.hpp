// wrap: function
#include <saturn/http.hpp>
#include <string>
#include <string_view>
using saturn::http::text_value;
inline std::string ct = "text/html";
