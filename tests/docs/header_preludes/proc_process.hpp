// wrap: file
// (`p` is a namespace-scope variable here: the example's spawn_process call is checked,
// never run.)
#include <saturn/proc.hpp>
inline saturn::pid_of<int> me;
