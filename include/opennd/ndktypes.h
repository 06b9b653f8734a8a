/* OpenND NDK: the Windows kernel types NDKPI is written in terms of.
 *
 * NDKPI (<ndkpi.h>) is a kernel interface: its calls take NTSTATUS, MDLs,
 * physical (logical) addresses and processor group affinities. This header
 * gives user-space consumers those names with the Windows x64 layouts.
 *
 * MDL: OpenND has no page lists. An MDL here only describes a virtually
 * contiguous range of this process's memory (StartVa + ByteOffset, ByteCount);
 * MmInitializeMdl fills one in. Chains (Next) must be virtually contiguous.
 *
 * Logical addresses (NdkBuildLAM's AdapterPageArray, and SGEs that carry the
 * privileged token) are the virtual addresses of this process's pages: a
 * mapping lists PAGE_SIZE pages of the MDL's range, registered with the
 * provider until NdkReleaseLAM.
 */
#ifndef OPENND_NDKTYPES_H
#define OPENND_NDKTYPES_H

#include "opennd/win32.h"

#ifdef __cplusplus
#define OPENND_NDK_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define OPENND_NDK_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* NTSTATUS, PNTSTATUS and NT_SUCCESS come from <opennd/win32.h>. */
#ifndef MAXULONG
#define MAXULONG 0xFFFFFFFFu
#endif
#ifndef MAXUSHORT
#define MAXUSHORT 0xFFFFu
#endif

typedef ULONG NET_IFINDEX, IF_INDEX;

/* A processor group affinity (hint only; OpenND has one group, 0). */
typedef struct _GROUP_AFFINITY {
    KAFFINITY Mask;
    USHORT Group;
    USHORT Reserved[3];
} GROUP_AFFINITY, *PGROUP_AFFINITY;

typedef LARGE_INTEGER PHYSICAL_ADDRESS, *PPHYSICAL_ADDRESS;

#ifndef PAGE_SIZE
#define PAGE_SIZE 4096u
#endif

/* Memory descriptor list, Windows x64 layout (the page array that follows a
 * Windows MDL is not used). */
typedef struct _MDL {
    struct _MDL *Next;
    SHORT Size;
    SHORT MdlFlags;
    USHORT AllocationProcessorNumber;
    USHORT Reserved;
    PVOID Process;
    PVOID MappedSystemVa;
    PVOID StartVa; /* page-aligned */
    ULONG ByteCount;
    ULONG ByteOffset; /* offset of the first byte within the page at StartVa */
} MDL, *PMDL;

static inline void MmInitializeMdl(MDL *Mdl, PVOID BaseVa, SIZE_T Length) {
    ULONG_PTR va = (ULONG_PTR)BaseVa;
    Mdl->Next = NULL;
    Mdl->Size = (SHORT)sizeof(MDL);
    Mdl->MdlFlags = 0;
    Mdl->AllocationProcessorNumber = 0;
    Mdl->Reserved = 0;
    Mdl->Process = NULL;
    Mdl->MappedSystemVa = BaseVa;
    Mdl->StartVa = (PVOID)(va & ~(ULONG_PTR)(PAGE_SIZE - 1));
    Mdl->ByteOffset = (ULONG)(va & (PAGE_SIZE - 1));
    Mdl->ByteCount = (ULONG)Length;
}

static inline PVOID MmGetMdlVirtualAddress(const MDL *Mdl) {
    return (PVOID)((ULONG_PTR)Mdl->StartVa + Mdl->ByteOffset);
}

static inline ULONG MmGetMdlByteCount(const MDL *Mdl) { return Mdl->ByteCount; }

static inline ULONG MmGetMdlByteOffset(const MDL *Mdl) { return Mdl->ByteOffset; }

OPENND_NDK_STATIC_ASSERT(sizeof(GROUP_AFFINITY) == 16, "GROUP_AFFINITY layout");
OPENND_NDK_STATIC_ASSERT(sizeof(PHYSICAL_ADDRESS) == 8, "PHYSICAL_ADDRESS layout");
OPENND_NDK_STATIC_ASSERT(sizeof(MDL) == 48, "MDL layout (x64)");
OPENND_NDK_STATIC_ASSERT(offsetof(MDL, StartVa) == 32, "MDL layout (x64)");

#endif /* OPENND_NDKTYPES_H */
