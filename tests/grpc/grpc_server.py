#!/usr/bin/python3
"""A python3-grpcio server of the test service's methods (test.proto's messages, encoded
by hand as in grpc_client.py), for saturn's grpc::channel to call. Prints its port, then
serves until its stdin closes. With --tls, serves h2 over TLS (grpc.ssl_server_credentials)
with the given certificate chain and key (PEM files).

usage: grpc_server.py [--tls CERT KEY]
"""
import sys
import time
from concurrent import futures

import grpc

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from grpc_client import num, num_of, text, text_of  # noqa: E402

ident = lambda b: b


def echo(req, ctx):
    md = dict(ctx.invocation_metadata())
    ctx.set_trailing_metadata((("x-trailer", "py:" + md.get("x-tag", "")),))
    return text(text_of(req))


def count(req, ctx):
    for i in range(1, num_of(req) + 1):
        yield num(i)


def total(it, ctx):
    return num(sum(num_of(m) for m in it))


def fail(req, ctx):
    ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, "not today")


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo, request_deserializer=ident, response_serializer=ident),
        "Count": grpc.unary_stream_rpc_method_handler(count, request_deserializer=ident, response_serializer=ident),
        "Sum": grpc.stream_unary_rpc_method_handler(total, request_deserializer=ident, response_serializer=ident),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, request_deserializer=ident, response_serializer=ident),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("saturn_test.Calc", handlers),))
    if len(sys.argv) == 4 and sys.argv[1] == "--tls":
        with open(sys.argv[2], "rb") as f:
            chain = f.read()
        with open(sys.argv[3], "rb") as f:
            key = f.read()
        port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key, chain)]))
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    sys.stdin.read()
    server.stop(0)


if __name__ == "__main__":
    main()
