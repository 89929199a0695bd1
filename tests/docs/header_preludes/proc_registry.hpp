// wrap: function
#include <saturn/proc.hpp>
#include <string>
struct log_msg {
  std::string text;
};
inline saturn::pid_of<log_msg> logger_pid;
