"""The Open Inference Protocol over gRPC (KServe v2 ``GRPCInferenceService``): the messages
(``kserve_v2.proto``, generated ``kserve_v2_pb2``) and the service (``service``)."""
