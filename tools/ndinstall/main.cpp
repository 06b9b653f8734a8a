// ndinstall: list, install and remove NetworkDirect providers in the OpenND
// catalog (a directory of drop-in files, see opennd/catalog.h).
// Exit status: 0 success, 1 failure, 2 usage error.
#include <dlfcn.h>
#include <getopt.h>
#include <limits.h>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "opennd/catalog.h"

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

const char kHelp[] =
    "Usage:\n"
    "  ndinstall [--catalog DIR] -l\n"
    "  ndinstall [--catalog DIR] -i FILE.conf\n"
    "  ndinstall [--catalog DIR] -i LIBRARY --name NAME --guid GUID [--description TEXT] [--order NN]\n"
    "  ndinstall [--catalog DIR] -r NAME|GUID\n"
    "\n"
    "Manages the NetworkDirect provider catalog: a directory of drop-in files,\n"
    "one per catalog entry, read in file-name order.\n"
    "\n"
    "Options:\n"
    "  -l, --list             List the catalog entries in catalog order: name, GUID,\n"
    "                         library, version and whether the entry is a usable ND\n"
    "                         provider (and if not, why). Files that could not be read\n"
    "                         are listed with the reason.\n"
    "  -i, --install FILE.conf\n"
    "                         Install a catalog entry file (format: see\n"
    "                         opennd/catalog.h). A relative library path in it is\n"
    "                         relative to the catalog directory. A file name starting\n"
    "                         with two digits and '-' (20-foo.conf) sets the order.\n"
    "  -i, --install LIBRARY  Install a provider library (any argument not ending in\n"
    "                         .conf) as an ND v2 provider for IPv4 and IPv6. Needs\n"
    "                         --name and --guid. The path is stored made absolute with\n"
    "                         realpath.\n"
    "      --name NAME        The provider's name (with -i LIBRARY).\n"
    "      --guid GUID        The provider's GUID, {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}\n"
    "                         with or without braces (with -i LIBRARY).\n"
    "      --description TEXT A description (with -i LIBRARY).\n"
    "      --order NN         Two-digit order prefix of the file (with -i LIBRARY);\n"
    "                         default: 50, or higher so that a new provider sorts last\n"
    "                         before 90; a reinstalled provider keeps its place.\n"
    "                         90 to 99 are for providers that serve every address\n"
    "                         (ndsoft is 90), tried after those that serve their own.\n"
    "  -r, --remove NAME|GUID Remove every catalog entry of the provider with that\n"
    "                         GUID, or with that name if the argument is not a GUID.\n"
    "      --catalog DIR      Use catalog directory DIR (default: $OPENND_CATALOG, else\n"
    "                         the catalog of the libopennd in use, else\n"
    "                         /etc/opennd/providers.d).\n"
    "  -h, --help             Show this help.\n"
    "\n"
    "Installing replaces any entry with the same GUID. Before installing, the\n"
    "library is checked: an absolute path to a regular file, neither it nor its\n"
    "directory world-writable or owned by a user other than root or you, and it\n"
    "must load and export DllGetClassObject and DllCanUnloadNow.\n"
    "\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

int Usage(const std::string &msg) {
    std::fprintf(stderr, "ndinstall: %s\nTry 'ndinstall --help'.\n", msg.c_str());
    return kUsage;
}

int Failure(const std::string &msg) {
    std::fprintf(stderr, "ndinstall: %s\n", msg.c_str());
    return kFailed;
}

std::string VersionText(int32_t v) {
    char buf[64];
    const char *what = v == 0x20000 || v == 2 ? " (ND v2)" : v == 1 ? " (ND v1)" : "";
    std::snprintf(buf, sizeof buf, "0x%08x%s", static_cast<uint32_t>(v), what);
    return buf;
}

int List(const std::string &dir) {
    opennd::CatalogListing listing = opennd::ReadCatalog(dir);
    std::printf("Catalog: %s\n", dir.c_str());
    if (listing.entries.empty()) std::printf("No providers installed.\n");
    int i = 0;
    for (const opennd::CatalogEntry &e : listing.entries) {
        std::string why;
        if (!opennd::IsNdCandidate(e, &why))
            why = "not an ND provider: " + why;
        else if (std::string lib = opennd::CheckProviderLibrary(e.library_path); !lib.empty())
            why = "library refused: " + lib;
        std::printf("%2d. %s %s\n", ++i, e.name.c_str(), opennd::FormatGuid(e.provider_id).c_str());
        if (!e.description.empty()) std::printf("    description: %s\n", e.description.c_str());
        std::printf("    library:     %s", e.library_path.c_str());
        if (e.library != e.library_path) std::printf(" (written %s)", e.library.c_str());
        std::printf("\n    version:     %s, family %s\n", VersionText(e.version).c_str(),
                    e.address_family == AF_INET ? "inet" : "inet6");
        std::printf("    file:        %s\n", e.file.c_str());
        std::printf("    status:      %s\n", why.empty() ? "valid" : ("INVALID, " + why).c_str());
    }
    if (!listing.problems.empty()) {
        std::printf("Problems (these files are ignored):\n");
        for (const opennd::CatalogProblem &p : listing.problems)
            std::printf("    %s: %s\n", p.file.c_str(), p.reason.c_str());
    }
    return kOk;
}

// "" if the library may be installed, else why not.
std::string VerifyLibrary(const std::string &path) {
    std::string why;
    void *h = opennd::LoadProviderLibrary(path, RTLD_LAZY | RTLD_LOCAL, &why);
    if (!h) return why;
    std::string missing;
    for (const char *sym : {"DllGetClassObject", "DllCanUnloadNow"})
        if (!dlsym(h, sym)) missing += (missing.empty() ? "" : " and ") + std::string(sym);
    dlclose(h);
    if (!missing.empty()) return path + " does not export " + missing + " (not an ND provider library)";
    return "";
}

int Install(const std::string &dir, opennd::CatalogEntry e) {
    if (e.library_path.empty()) {
        std::filesystem::path lib(e.library);
        e.library_path = lib.is_absolute() ? lib.lexically_normal().string()
                                           : (std::filesystem::absolute(dir) / lib).lexically_normal().string();
    }
    std::string why;
    if (!opennd::IsNdCandidate(e, &why)) return Failure("refusing " + e.name + ": not an ND provider entry: " + why);
    if (why = VerifyLibrary(e.library_path); !why.empty()) return Failure("refusing " + e.name + ": " + why);
    if (!opennd::InstallProvider(dir, e, &why)) return Failure("cannot install " + e.name + ": " + why);
    std::printf("Installed %s %s (%s) in %s\n", e.name.c_str(), opennd::FormatGuid(e.provider_id).c_str(),
                e.library_path.c_str(), dir.c_str());
    return kOk;
}

int InstallFile(const std::string &dir, const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Failure("cannot open " + file);
    std::ostringstream text;
    text << in.rdbuf();
    opennd::CatalogEntry e;
    std::string error;
    if (!opennd::ParseCatalogEntry(text.str(), &e, &error)) return Failure(file + ": " + error);
    e.file = file;  // its name may carry the order prefix
    return Install(dir, e);
}

}  // namespace

int main(int argc, char **argv) {
    setenv("OPENND_LOG", "1", 0);  // ndinstall reports catalog problems itself
    enum { kName = 256, kGuid, kDescription, kCatalog, kOrder };
    static const option kOptions[] = {
        {"list", no_argument, nullptr, 'l'},          {"install", required_argument, nullptr, 'i'},
        {"remove", required_argument, nullptr, 'r'},  {"help", no_argument, nullptr, 'h'},
        {"name", required_argument, nullptr, kName},  {"guid", required_argument, nullptr, kGuid},
        {"description", required_argument, nullptr, kDescription},
        {"catalog", required_argument, nullptr, kCatalog},
        {"order", required_argument, nullptr, kOrder},
        {nullptr, 0, nullptr, 0}};
    char action = 0;
    std::string target, name, guid, description, catalog, order;
    bool have_name = false, have_guid = false, have_description = false, have_order = false;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":li:r:h", kOptions, nullptr)) != -1) {
        switch (c) {
        case 'l':
        case 'i':
        case 'r':
            if (action) return Usage("give only one of -l, -i and -r");
            action = static_cast<char>(c);
            if (optarg) target = optarg;
            break;
        case 'h': std::fputs(kHelp, stdout); return kOk;
        case kName: name = optarg; have_name = true; break;
        case kGuid: guid = optarg; have_guid = true; break;
        case kDescription: description = optarg; have_description = true; break;
        case kCatalog: catalog = optarg; break;
        case kOrder: order = optarg; have_order = true; break;
        case ':': return Usage(std::string("option ") + argv[optind - 1] + " needs an argument");
        default: return Usage(std::string("unknown option ") + argv[optind - 1]);
        }
    }
    if (optind < argc) return Usage(std::string("unexpected argument '") + argv[optind] + "'");
    if (!action) return Usage("give one of -l, -i or -r");
    const bool library_install = action == 'i' && !target.ends_with(".conf");
    if (!library_install && (have_name || have_guid || have_description || have_order))
        return Usage("--name, --guid, --description and --order go with -i LIBRARY only");
    if (catalog.empty()) catalog = opennd::CatalogDirectory();

    if (action == 'l') return List(catalog);
    if (action == 'r') {
        GUID id;
        std::string error;
        bool ok = opennd::ParseGuid(target, &id) ? opennd::RemoveProvider(catalog, id, &error)
                                                 : opennd::RemoveProviderByName(catalog, target, &error);
        if (!ok) return Failure("cannot remove " + target + ": " + error);
        std::printf("Removed %s from %s\n", target.c_str(), catalog.c_str());
        return kOk;
    }
    if (!library_install) return InstallFile(catalog, target);

    if (!have_name || name.empty()) return Usage("-i LIBRARY needs --name NAME");
    if (!have_guid) return Usage("-i LIBRARY needs --guid GUID");
    opennd::CatalogEntry e;
    if (!opennd::ParseGuid(guid, &e.provider_id)) return Usage("'" + guid + "' is not a GUID");
    if (have_order) {
        if (order.size() != 2 || !isdigit(static_cast<unsigned char>(order[0])) ||
            !isdigit(static_cast<unsigned char>(order[1])))
            return Usage("--order needs two digits, such as 20");
        e.file = order + "-";
    }
    char *real = realpath(target.c_str(), nullptr);
    if (!real) return Failure("cannot find library " + target + ": " + std::strerror(errno));
    e.library = e.library_path = real;
    free(real);
    e.name = name;
    e.description = description;
    return Install(catalog, e);
}
