/// \file
/// The loop's implementer part: what a module that adds its own ring operations needs
/// (saturn's net, fs, os, task and effect layers are written with it). Raw `submit_*`
/// operations over `event_loop&`, the `operation` node, provided-buffer rings, loop exit
/// hooks and the operation pool. A program written against tasks, effects or callbacks
/// includes none of this.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/exit_hook.hpp>
#include <saturn/ext/op_pool.hpp>
#include <saturn/ext/operation.hpp>
#include <saturn/ext/submit.hpp>
#include <saturn/ext/submit_fs.hpp>
#include <saturn/ext/submit_net.hpp>
#include <saturn/loop/event_loop.hpp>
