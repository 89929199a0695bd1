// wrap: function
#include <saturn/http.hpp>
#include <string>
extern saturn::http::router routes;
inline std::string dir = "/srv/www";
