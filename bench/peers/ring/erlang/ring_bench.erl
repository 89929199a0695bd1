%% ring-erlang: the `ring` suite (docs/workloads.md) on Erlang/OTP, the runtime the
%% suite is named after: N processes, each with its own mailbox, plain `!` and
%% `receive`, nothing else.
%%
%%   erl -noshell [+P MAX] [+S T:T] -pa DIR -s ring_bench start -extra N LAPS
%%       [--samples S] [--warmup W] [--threads T]
%% (-extra: erl would take the --flags for its own otherwise)
%% (the ring-erlang wrapper passes +P and +S for you).
%%
%% One sample: spawn process 0 (it learns its successor later), then processes
%% N-1 down to 1, each spawned knowing its successor, and tell process 0 about
%% process 1: that is "spawn and link" (connected into a ring; no link/1 is made,
%% a ring needs none). The driver sends N*LAPS to process 0; every process forwards
%% V as V-1 to its successor; the one that receives 0 (process 0, after LAPS laps)
%% tells the driver. Every process counts what it forwarded; after the clock stops,
%% a stop message goes once round the ring summing the counts (the checksum) and
%% ends every process.
-module(ring_bench).
-export([start/0, main/1]).

start() -> main(init:get_plain_arguments()).

main(Args) ->
    try
        run(Args),
        halt(0)
    catch
        throw:{usage, Why} ->
            io:format(standard_error,
                      "error: ~s~nusage: ring-erlang N LAPS [--samples S] [--warmup W] [--threads T]~n",
                      [Why]),
            halt(2)
    end.

run(Args) ->
    {Positional, Opts} = options(Args, [], #{samples => 5, warmup => 1}),
    {N, Laps} = case Positional of
                    [A, B] -> {count(A), count(B)};
                    _ -> throw({usage, "N and LAPS are required"})
                end,
    N >= 1 andalso Laps >= 1 orelse throw({usage, "N and LAPS must be at least 1"}),
    #{samples := Samples, warmup := Warmup} = Opts,
    Samples >= 1 orelse throw({usage, "--samples must be at least 1"}),
    Hops = N * Laps,
    Runs = [one_sample(N, Hops) || _ <- lists:seq(1, Warmup + Samples)],
    Kept = lists:nthtail(Warmup, Runs),
    [check(Sum, Hops) || {_, _, Sum} <- Runs],
    lists:foreach(fun({I, {S, H, _}}) ->
                          io:format(standard_error, "# erlang ring_~b_~b sample ~b: spawn ~.3f ms, hops ~.3f ms~n",
                                    [N, Laps, I, S / 1.0e6, H / 1.0e6])
                  end, lists:zip(lists:seq(0, Samples - 1), Kept)),
    Line = io_lib:format(
             "{\"suite\":\"ring\",\"scenario\":\"ring_~b_~b\",\"runtime\":\"erlang\",\"threads\":~b,"
             "\"procs\":~b,\"laps\":~b,\"hops\":~b,\"wall_s\":~.6f,\"spawn_ns_per_proc\":~.1f,"
             "\"hops_per_sec\":~b,\"peak_rss_kib\":~b,\"checksum\":~b}~n",
             [N, Laps, erlang:system_info(schedulers_online), N, Laps, Hops,
              median([H / 1.0e9 || {_, H, _} <- Kept]),
              median([S / N || {S, _, _} <- Kept]),
              round(median([Hops / (H / 1.0e9) || {_, H, _} <- Kept])),
              vm_hwm_kib(), Hops]),
    io:put_chars(Line).

check(Hops, Hops) -> ok;
check(Sum, Hops) ->
    io:format(standard_error, "ring-erlang: checksum ~b, expected ~b~n", [Sum, Hops]),
    halt(1).

%% {SpawnNs, HopNs, Checksum} of one ring.
one_sample(N, Hops) ->
    Driver = self(),
    T0 = erlang:monotonic_time(nanosecond),
    First = spawn(fun() -> receive {successor, Next} -> relay(Next, Driver, 0) end end),
    Second = spawn_back(N - 1, First, Driver),
    First ! {successor, Second},
    T1 = erlang:monotonic_time(nanosecond),
    First ! Hops,
    receive token_home -> ok end,
    T2 = erlang:monotonic_time(nanosecond),
    First ! {stop, N, 0},
    receive {forwarded, Sum} -> {T1 - T0, T2 - T1, Sum} end.

%% Spawns processes K..1 (K first), each knowing its successor; returns process 1.
spawn_back(0, Next, _Driver) -> Next;
spawn_back(K, Next, Driver) ->
    Pid = spawn(fun() -> relay(Next, Driver, 0) end),
    spawn_back(K - 1, Pid, Driver).

%% One ring member. Forwarded counts the tokens it passed on.
relay(Next, Driver, Forwarded) ->
    receive
        0 ->
            Driver ! token_home,
            relay(Next, Driver, Forwarded);
        V when is_integer(V) ->
            Next ! V - 1,
            relay(Next, Driver, Forwarded + 1);
        {stop, 1, Sum} ->
            Driver ! {forwarded, Sum + Forwarded};
        {stop, Left, Sum} ->
            Next ! {stop, Left - 1, Sum + Forwarded}
    end.

%% Peak resident set in KiB: VmHWM, what getrusage reports as ru_maxrss.
vm_hwm_kib() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kib]} = re:run(Status, "VmHWM:\\s*([0-9]+)", [{capture, all_but_first, binary}]),
    binary_to_integer(Kib).

median(Xs) ->
    Sorted = lists:sort(Xs),
    Len = length(Sorted),
    case Len rem 2 of
        1 -> lists:nth(Len div 2 + 1, Sorted);
        0 -> (lists:nth(Len div 2, Sorted) + lists:nth(Len div 2 + 1, Sorted)) / 2
    end.

options([], Pos, Opts) -> {lists:reverse(Pos), Opts};
options(["--samples", V | Rest], Pos, Opts) -> options(Rest, Pos, Opts#{samples := count(V)});
options(["--warmup", V | Rest], Pos, Opts) -> options(Rest, Pos, Opts#{warmup := count(V)});
%% --threads is applied by the wrapper (+S T:T); the JSON reports schedulers_online.
options(["--threads", V | Rest], Pos, Opts) -> count(V), options(Rest, Pos, Opts);
options(["--" ++ Flag | _], _, _) -> throw({usage, "unknown flag or missing value: --" ++ Flag});
options([A | Rest], Pos, Opts) -> options(Rest, [A | Pos], Opts).

count(S) ->
    try list_to_integer(S) of
        N when N >= 0 -> N;
        _ -> throw({usage, "not a count: " ++ S})
    catch
        error:badarg -> throw({usage, "not a count: " ++ S})
    end.
