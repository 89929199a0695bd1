// wrap: task
#include <saturn/sync.hpp>
void use(int v);
