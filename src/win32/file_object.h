// Overlapped files: the handle IND2Adapter::CreateOverlappedFile returns, and
// the completion target providers complete requests through.
#pragma once

#include "win32/event.h"
#include "win32/handle_table.h"
#include "win32/port.h"

namespace opennd::win32 {

// Ownership: the handle table holds one reference, each acquired completion
// target another, so a provider can complete requests after the application
// closed the handle. The file holds a reference to its bound port, so those
// completions still reach the port while the port's handle is open (after
// that the port drops them).
//
// The eventfd counts completions delivered through the file; it is never
// drained here (an application polling it reads it to reset). Waiting on the
// file handle is satisfied while it is readable and does not consume.
class FileObject final : public Object {
public:
    static constexpr ObjectKind kKind = ObjectKind::File;

    explicit FileObject(int fd) : Object(kKind, fd) {}

    bool SignalledLocked() override { return FdReadable(fd()); }

    // Associates the file with a port; false if it already has one.
    bool Bind(std::shared_ptr<PortObject> port, ULONG_PTR key);

    // OpenNdCompleteOverlapped (see include/opennd/overlapped_file.h). With
    // `taken`, the event taken when the request began is signalled (it may
    // be null: none); without, the one hEvent names now.
    void Complete(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes, const std::shared_ptr<EventObject> *taken = nullptr);

private:
    std::shared_ptr<PortObject> port_;  // guarded by mu_; set once by Bind
    ULONG_PTR key_ = 0;                 // guarded by mu_
};

}  // namespace opennd::win32

// The opaque types of include/opennd/overlapped_file.h: one counted reference.
struct OpenNdCompletionTarget {
    std::shared_ptr<opennd::win32::FileObject> file;
};
struct OpenNdEventRef {
    std::shared_ptr<opennd::win32::EventObject> event;
};
