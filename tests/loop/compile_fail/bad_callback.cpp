// Compile-fail cases for the callback tier (not part of test_loop: built one case at a
// time by compile_fail_test.cpp when SATURN_CXX names a compiler). Each SATURN_CASE_*
// must be rejected with the static_assert message naming the expected signature;
// SATURN_CASE_OK must compile, proving the failures come from the callables alone.
#include <saturn/loop/event_loop.hpp>

#include <string>

void use(saturn::event_loop& loop, int fd, char* buf) {
#if defined(SATURN_CASE_OK)
  loop.nop([](int) {});
  loop.read(fd, buf, 1, 0, [](int, unsigned) {});
  loop.defer([] {});
  loop.after(std::chrono::milliseconds(1), [] {});
  loop.cancel(loop.nop([](int) {}), [](int) {});
#elif defined(SATURN_CASE_NOP_WITHOUT_RESULT)
  loop.nop([] {});  // a completion must take the result
#elif defined(SATURN_CASE_READ_WRONG_ARGUMENT)
  loop.read(fd, buf, 1, 0, [](const std::string&) {});
#elif defined(SATURN_CASE_READ_NON_CALLABLE)
  loop.read(fd, buf, 1, 0, 42);
#elif defined(SATURN_CASE_DEFER_WITH_ARGUMENT)
  loop.defer([](int) {});  // deferred work takes no argument
#elif defined(SATURN_CASE_AFTER_WITH_ARGUMENT)
  loop.after(std::chrono::milliseconds(1), [](int) {});
#elif defined(SATURN_CASE_TIMEOUT_TOO_MANY_ARGUMENTS)
  loop.timeout(std::chrono::milliseconds(1), [](int, unsigned, int) {});
#else
#error "define one SATURN_CASE_*"
#endif
  (void)fd;
  (void)buf;
}
