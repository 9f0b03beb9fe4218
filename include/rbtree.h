/* rbtree.h: intrusive red-black trees (our own implementation, core/rbtree.c).
 *
 * Used for the per-queue sector sort, the service trees and the group
 * service tree.  Like the kernel's rb_root_cached, the root caches its
 * leftmost node so that "serve the smallest key" is O(1).
 *
 * Insertion is done by the caller: walk from the root comparing keys,
 * then rb_link() the node at the found place and rb_insert_fixup() it.
 * rb_insert() is a convenience wrapper taking a less-than function.
 */
#ifndef CFQ_RBTREE_H
#define CFQ_RBTREE_H

#include <stdbool.h>
#include <stddef.h>

struct rb_node {
  struct rb_node *parent, *left, *right;
  int red;                      /* 1 red, 0 black */
};

struct rb_root {
  struct rb_node *node;         /* root, NULL if empty */
  struct rb_node *leftmost;     /* cached smallest node, NULL if empty */
  size_t count;                 /* nodes in the tree */
};

#define RB_ROOT_INIT { NULL, NULL, 0 }

static inline void
rb_root_init (struct rb_root *r)
{
  r->node = r->leftmost = NULL;
  r->count = 0;
}

/* A node that is on no tree has parent == node (set by rb_clear). */
static inline void
rb_clear (struct rb_node *n)
{
  n->parent = n;
  n->left = n->right = NULL;
  n->red = 0;
}

static inline bool
rb_linked (const struct rb_node *n)
{
  return n->parent != n;
}

static inline bool
rb_empty (const struct rb_root *r)
{
  return r->node == NULL;
}

static inline struct rb_node *
rb_first (const struct rb_root *r)
{
  return r->leftmost;
}

/* Link n under parent at *link (link is &parent->left, &parent->right or
 * &root->node when parent is NULL), then rebalance.  leftmost says whether
 * the walk only ever went left.
 */
extern void rb_insert_at (struct rb_root *r, struct rb_node *n,
                          struct rb_node *parent, struct rb_node **link,
                          bool leftmost);
extern void rb_insert (struct rb_root *r, struct rb_node *n,
                       bool (*less) (const struct rb_node *a,
                                     const struct rb_node *b));
extern void rb_erase (struct rb_root *r, struct rb_node *n);
extern struct rb_node *rb_last (const struct rb_root *r);
extern struct rb_node *rb_next (const struct rb_node *n);
extern struct rb_node *rb_prev (const struct rb_node *n);

#endif /* CFQ_RBTREE_H */
