// A FIFO in one growable circular buffer. std::deque gives an element as
// large as a posted receive (272 bytes) a heap node of its own, so every
// receive cost a malloc and a free on the data path; this one allocates only
// when it grows past its largest size so far.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace soft {

template <class T>
class RingQueue {
public:
    RingQueue() = default;
    RingQueue(const RingQueue &) = default;
    RingQueue &operator=(const RingQueue &) = default;
    RingQueue(RingQueue &&o) noexcept { *this = std::move(o); }
    RingQueue &operator=(RingQueue &&o) noexcept {  // the moved-from queue is empty
        slots_ = std::move(o.slots_);
        capacity_ = std::exchange(o.capacity_, 0);
        head_ = std::exchange(o.head_, 0);
        size_ = std::exchange(o.size_, 0);
        o.slots_.clear();
        return *this;
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T &front() { return slots_[head_]; }
    const T &front() const { return slots_[head_]; }
    T &back() { return slots_[Index(size_ - 1)]; }
    T &operator[](size_t i) { return slots_[Index(i)]; }
    const T &operator[](size_t i) const { return slots_[Index(i)]; }

    void push_back(const T &v) { emplace_back() = v; }
    // A new last element, left as the slot last held it (the caller fills
    // it in): no temporary is built and copied.
    T &emplace_back() {
        if (size_ == capacity_) Grow();
        ++size_;
        return slots_[Index(size_ - 1)];
    }
    void pop_front() {
        head_ = Index(1);
        --size_;
    }
    void clear() { head_ = size_ = 0; }

    // Oldest first; invalidated by push_back, emplace_back and pop_front.
    template <class Q, class V>
    class Iter {
    public:
        Iter(Q *q, size_t i) : q_(q), i_(i) {}
        V &operator*() const { return (*q_)[i_]; }
        V *operator->() const { return &(*q_)[i_]; }
        Iter &operator++() {
            ++i_;
            return *this;
        }
        bool operator==(const Iter &o) const { return i_ == o.i_; }

    private:
        Q *q_;
        size_t i_;
    };
    Iter<RingQueue, T> begin() { return {this, 0}; }
    Iter<RingQueue, T> end() { return {this, size_}; }
    Iter<const RingQueue, const T> begin() const { return {this, 0}; }
    Iter<const RingQueue, const T> end() const { return {this, size_}; }

    // Calls f on every element, oldest first.
    template <class F>
    void ForEach(F &&f) const {
        for (size_t i = 0; i < size_; ++i) f(slots_[Index(i)]);
    }

private:
    // (capacity_, not slots_.size(): that divides by sizeof(T) on every call.)
    size_t Index(size_t i) const {
        size_t at = head_ + i;
        return at >= capacity_ ? at - capacity_ : at;
    }
    void Grow() {
        std::vector<T> bigger(slots_.empty() ? 8 : slots_.size() * 2);
        for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[Index(i)]);
        slots_.swap(bigger);
        capacity_ = slots_.size();
        head_ = 0;
    }

    std::vector<T> slots_;
    size_t capacity_ = 0;  // slots_.size()
    size_t head_ = 0, size_ = 0;
};

}  // namespace soft
