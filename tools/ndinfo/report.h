// ndinfo's model of what it found, and the two ways it prints it.
#pragma once

#include <string>
#include <vector>

#include "ndspi.h"

struct AdapterReport {
    UINT64 id = 0;
    std::vector<std::string> addresses;
    HRESULT open_status = ND_SUCCESS;
    HRESULT query_status = ND_SUCCESS;
    ND2_ADAPTER_INFO info{};
    std::string notes;  // the provider's IOpenNdAdapterNotes, if it has them
};

struct ProviderReport {
    std::string name, guid, library, file, description;
    int version = 0;
    bool usable = false;
    std::string failure;
    std::vector<AdapterReport> adapters;
};

struct Report {
    std::string catalog;
    std::vector<ProviderReport> providers;
    std::vector<std::string> problems;  // "file: reason"
};

void PrintText(const Report &r);
void PrintJson(const Report &r);
std::string StatusText(HRESULT hr);
