// wrap: function
#include <saturn/http.hpp>
#include <saturn/net.hpp>
namespace http = saturn::http;
namespace websocket = saturn::http::websocket;
namespace net = saturn::net;
using saturn::task;
extern http::router routes;
