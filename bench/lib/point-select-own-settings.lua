-- sysbench script: oltp_point_select from sessions that each have settings of their own (a time zone, a
-- max_join_size, sql_mode and character set), set once after connecting. Through Gantry with multiplexing and
-- --connection-retention-ms 0, each statement takes whichever pooled connection is free, most often one another
-- session used last, so Gantry resets it and replays the session's settings before the statement (issue 32's
-- hand-off). Run with sysbench's usual options, e.g.
--   sysbench bench/lib/point-select-own-settings.lua --mysql-host=127.0.0.1 --mysql-port=PORT ... run
-- (LUA_PATH must reach sysbench's oltp_common.lua, e.g. LUA_PATH='/usr/share/sysbench/?.lua;;').
require("oltp_common")

function prepare_statements()
   sysbench.opt.point_selects = 1
   prepare_point_selects()
end

function event()
   execute_point_selects()
end

local common_thread_init = thread_init

function thread_init()
   common_thread_init()
   local tid = sysbench.tid
   -- Distinct for up to 780 threads (time zones go up to +13:00): no two sessions have the same settings.
   con:query(string.format("SET time_zone = '+%02d:%02d'", tid % 13, math.floor(tid / 13) % 60))
   con:query(string.format("SET max_join_size = %d", 1000000 + tid))
   con:query("SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION,ANSI_QUOTES'")
   con:query("SET NAMES utf8mb4")
end
