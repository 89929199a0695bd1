#!/usr/bin/python3
"""gRPC calls from python3-grpcio (Debian) to the test service of service_test.cpp, on
127.0.0.1:PORT. Messages are encoded by hand (test.proto: Num{int64 value=1},
Text{string text=1}) so no generated stubs are needed. Prints one line per case.

usage: grpc_client.py PORT CASE
"""
import sys
import threading
import time

import grpc


def varint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def num(v):
    return b"\x08" + varint(v) if v else b""


def text(s):
    b = s.encode()
    return b"\x0a" + varint(len(b)) + b if b else b""


def read_varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def num_of(b):
    return read_varint(b, 1)[0] if b else 0


def text_of(b):
    if not b:
        return ""
    n, i = read_varint(b, 1)
    return b[i:i + n].decode()


ident = lambda b: b


def main():
    port, case = sys.argv[1], sys.argv[2]
    ch = grpc.insecure_channel("127.0.0.1:" + port)
    unary = lambda m: ch.unary_unary("/saturn_test.Calc/" + m, request_serializer=ident, response_deserializer=ident)
    try:
        if case == "echo":
            r, call = unary("Echo").with_call(text("hello"), metadata=[("x-tag", "t1")], timeout=5)
            tr = dict(call.trailing_metadata())
            print(text_of(r), tr.get("x-trailer"))
        elif case == "fail":
            unary("Fail")(b"", timeout=5)
        elif case == "throw":
            unary("Throw")(b"", timeout=5)
        elif case == "slow":
            unary("Slow")(b"", timeout=0.3)
        elif case == "unknown":
            unary("Nope")(b"", timeout=5)
        elif case == "count":
            s = ch.unary_stream("/saturn_test.Calc/Count", request_serializer=ident, response_deserializer=ident)
            print(" ".join(str(num_of(m)) for m in s(num(5), timeout=5)))
        elif case == "cancel_stream":
            s = ch.unary_stream("/saturn_test.Calc/Forever", request_serializer=ident, response_deserializer=ident)
            it = s(b"", timeout=10)
            got = [num_of(next(it)) for _ in range(3)]
            it.cancel()
            print("got", len(got))
        elif case == "sum":
            c = ch.stream_unary("/saturn_test.Calc/Sum", request_serializer=ident, response_deserializer=ident)
            print(num_of(c(iter([num(i) for i in range(1, 101)]), timeout=5)))
        elif case == "sum_big":
            c = ch.stream_unary("/saturn_test.Calc/Sum", request_serializer=ident, response_deserializer=ident)
            # The second message (an unknown field of 70,000 bytes) passes the server's limit.
            c(iter([num(1), b"\x12" + varint(70000) + b"x" * 70000]), timeout=5)
        elif case == "many":
            # 200 concurrent unary calls on one channel (one HTTP/2 connection).
            futs = [unary("Echo").future(text("m%d" % i), timeout=10) for i in range(200)]
            ok = sum(1 for i, f in enumerate(futs) if text_of(f.result()) == "m%d" % i)
            print("ok", ok)
        elif case == "health":
            h = ch.unary_unary("/grpc.health.v1.Health/Check", request_serializer=ident, response_deserializer=ident)
            print(num_of(h(b"", timeout=5)), num_of(h(text("saturn_test.Calc"), timeout=5)))
        elif case == "watch":
            w = ch.unary_stream("/grpc.health.v1.Health/Watch", request_serializer=ident, response_deserializer=ident)
            it = w(text("saturn_test.Watched"), timeout=10)
            seen = [num_of(next(it))]
            flip = unary("Flip")
            flip(b"", timeout=5)  # the server sets saturn_test.Watched NOT_SERVING
            seen.append(num_of(next(it)))
            flip(b"", timeout=5)  # ... then SERVING
            seen.append(num_of(next(it)))
            it.cancel()
            print("seen", " ".join(map(str, seen)))
        else:
            print("unknown case " + case)
            sys.exit(2)
    except grpc.RpcError as e:
        print("error", e.code().name, e.details())


if __name__ == "__main__":
    main()
