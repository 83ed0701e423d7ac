#pragma once
// Tags of definitions (`fib tag`), all of it: the controlled namespaces and the check of one tag
// (namespaces.hpp), selecting definition files (selection.hpp), editing their `tags`
// (edit.hpp), and the inventory behind `fib tag list` (inventory.hpp). docs/tag.md describes the
// rules; nothing here prints. Include the part you need, or this header for all of them.

#include <fib/tag/edit.hpp>
#include <fib/tag/inventory.hpp>
#include <fib/tag/namespaces.hpp>
#include <fib/tag/selection.hpp>
