// Shared by the SMB Direct tests: the library connecting to a raw server.
#pragma once

#include "smbd_test_util.h"

NTSTATUS ConnectToRawServer(const smbd::NegotiateResponse &response, ndk_test::RawPeer *raw, smbd::Endpoint *client,
                            std::unique_ptr<smbd::Connection> *c, smbd::Limits limits);
smbd::NegotiateResponse GoodRawResponse(uint16_t granted);
