// wrap: task
#include <saturn/sync.hpp>
#include <saturn/task.hpp>
saturn::task<> produce(saturn::oneshot<int>::sender tx);
