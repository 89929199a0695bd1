// wrap: task
#include <saturn/sync.hpp>
#include <saturn/task.hpp>
#include <vector>
struct job_t {};
saturn::task<> run(job_t& job, saturn::wait_group& wg);
inline std::vector<job_t> jobs;
