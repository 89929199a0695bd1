/// \file
/// saturn's PostgreSQL client: connections, typed queries, pipelines, transactions,
/// LISTEN/NOTIFY and a pool (include/saturn/pg/).
#pragma once

#include <saturn/pg/config.hpp>
#include <saturn/pg/connection.hpp>
#include <saturn/pg/error.hpp>
#include <saturn/pg/pool.hpp>
#include <saturn/pg/rows.hpp>
#include <saturn/pg/types.hpp>
