"""gRPC door into Ragline (`ragline grpc`): a thin adapter over the same `ApiContext` as
the HTTP API. The service is defined in `ragline.proto`; `ragline_pb2*.py` are generated
(scripts/gen_grpc.sh, `make grpc`) and checked in."""
