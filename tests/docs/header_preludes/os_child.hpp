// wrap: task:saturn::result<void>
#include <saturn/os.hpp>
#include <saturn/task.hpp>
void use(int code);
