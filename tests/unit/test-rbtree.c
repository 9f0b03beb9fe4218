/* test-rbtree.c: core/rbtree.c keeps the red-black invariants, the cached
 * leftmost node, the count and the in-order sequence under random inserts
 * and erases (with many equal keys), checked after every operation against
 * a plain array model.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "list.h"
#include "rbtree.h"

struct item {
  struct rb_node rb;
  unsigned key;
  unsigned seq;                 /* insertion order, for equal keys */
  bool in;
};

static bool
item_less (const struct rb_node *a, const struct rb_node *b)
{
  return container_of (a, struct item, rb)->key
    < container_of (b, struct item, rb)->key;
}

static uint64_t rng = 88172645463325252ULL;
static unsigned
rnd (unsigned n)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned) (rng % n);
}

/* Returns the black height; asserts colour and link invariants. */
static int
check_node (const struct rb_node *n, const struct rb_node *parent,
            size_t *count)
{
  int lh, rh;

  if (!n)
    return 1;
  CHECK_PTR_EQ (n->parent, parent);
  CHECK (rb_linked (n));
  if (n->red) {
    CHECK (!n->left || !n->left->red);
    CHECK (!n->right || !n->right->red);
  }
  if (n->left)
    CHECK_LE (container_of (n->left, struct item, rb)->key,
              container_of (n, struct item, rb)->key);
  if (n->right)
    CHECK_GE (container_of (n->right, struct item, rb)->key,
              container_of (n, struct item, rb)->key);
  lh = check_node (n->left, n, count);
  rh = check_node (n->right, n, count);
  CHECK_EQ (lh, rh);
  (*count)++;
  return lh + !n->red;
}

static void
check_tree (const struct rb_root *r, struct item *items, size_t nitems)
{
  size_t count = 0, expect = 0;
  const struct rb_node *n, *prev = NULL;
  int bh;

  CHECK (!r->node || !r->node->red);
  bh = check_node (r->node, NULL, &count);
  (void) bh;
  for (size_t i = 0; i < nitems; i++)
    expect += items[i].in;
  CHECK_EQ (count, expect);
  CHECK_EQ (r->count, expect);
  CHECK_EQ (rb_empty (r), (expect == 0));

  /* In-order walk: sorted, equal keys in insertion order; leftmost and
   * last agree with the walk; rb_prev walks back.
   */
  n = rb_first (r);
  if (r->node) {
    const struct rb_node *m = r->node;
    while (m->left)
      m = m->left;
    CHECK_PTR_EQ (n, m);
  }
  else
    CHECK_NULL (n);
  count = 0;
  for (; n; n = rb_next (n)) {
    if (prev) {
      const struct item *a = container_of (prev, struct item, rb);
      const struct item *b = container_of (n, struct item, rb);
      CHECK (a->key < b->key || (a->key == b->key && a->seq < b->seq));
      CHECK_PTR_EQ (rb_prev (n), prev);
    }
    prev = n;
    count++;
  }
  CHECK_EQ (count, expect);
  CHECK_PTR_EQ (rb_last (r), prev);
}

int
main (void)
{
  enum { N = 512 };
  static struct item items[N];
  unsigned seq = 0;

  for (int round = 0; round < 200; round++) {
    struct rb_root r = RB_ROOT_INIT;
    unsigned keyspace = 1 + rnd (round % 2 ? 16 : 100000);

    for (int i = 0; i < N; i++) {
      rb_clear (&items[i].rb);
      items[i].in = false;
    }
    for (int op = 0; op < 4 * N; op++) {
      struct item *it = &items[rnd (N)];

      if (!it->in) {
        it->key = rnd (keyspace);
        it->seq = seq++;
        CHECK (!rb_linked (&it->rb));
        rb_insert (&r, &it->rb, item_less);
        it->in = true;
      }
      else {
        rb_erase (&r, &it->rb);
        CHECK (!rb_linked (&it->rb));
        it->in = false;
      }
      if (op % 7 == 0 || round < 4)
        check_tree (&r, items, N);
    }
    /* Drain in leftmost order, as the service trees do. */
    while (!rb_empty (&r)) {
      struct item *it = container_of (rb_first (&r), struct item, rb);
      rb_erase (&r, &it->rb);
      it->in = false;
      if (r.count % 13 == 0)
        check_tree (&r, items, N);
    }
    check_tree (&r, items, N);
  }
  printf ("rbtree: ok\n");
  check_done ("test-rbtree");
  return 0;
}
