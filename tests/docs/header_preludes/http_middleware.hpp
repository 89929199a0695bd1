// wrap: function
#include <saturn/http.hpp>
#include <chrono>
namespace http = saturn::http;
using saturn::task;
extern http::router routes;
task<http::response> slow_handler(const http::request& req);
