// wrap: task:saturn::http::response
#include <saturn/http.hpp>
#include <string>
using saturn::http::response;
inline std::string rendered = "{}";
