// What DeepShare's steps that place, start and preempt jobs work with (the Kubernetes
// scheduler framework's Handle): the configuration, the book, the layout, the run
// transitions, the checkpoints and the tally. Drains, Slicer, Reclaimer, Colocation and
// Admission hold one; each keeps its own state besides.
#pragma once

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/tally.hpp"

namespace ds::deepshare {

class Handle {
 public:
  Handle(const Config& c, Book& book, const Layout& layout, Runs& runs,
         const Checkpoints& checkpoints, Tally& tally)
      : c_(c),
        book_(book),
        layout_(layout),
        runs_(runs),
        checkpoints_(checkpoints),
        tally_(tally) {}

 protected:
  const Config& c_;
  Book& book_;
  const Layout& layout_;
  Runs& runs_;
  const Checkpoints& checkpoints_;
  Tally& tally_;
};

}  // namespace ds::deepshare
