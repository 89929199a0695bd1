/// \file
/// The umbrella header: every module header of saturn (result, loop, task, sched, sync,
/// net, tls, fs, os, proc, http, grpc, pg, effect, metrics). Test-only support (saturn/testing/) is not included.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/effect.hpp>
#include <saturn/fs.hpp>
#include <saturn/grpc.hpp>
#include <saturn/http.hpp>
#include <saturn/loop.hpp>
#include <saturn/metrics.hpp>
#include <saturn/net.hpp>
#include <saturn/os.hpp>
#include <saturn/pg.hpp>
#include <saturn/proc.hpp>
#include <saturn/result.hpp>
#include <saturn/sched.hpp>
#include <saturn/sync.hpp>
#include <saturn/task.hpp>
#include <saturn/tls.hpp>
