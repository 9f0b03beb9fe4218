/* rbtree.c: intrusive red-black trees (see include/rbtree.h).
 *
 * CFQ keeps everything it must find quickly in sorted trees: requests by
 * sector inside a queue, queues by service key inside a service tree,
 * groups by vdisktime on the group service tree, and queues by the sector
 * of their next request for cooperator lookup.  All of them want "give me
 * the smallest" in O(1) and insert/erase in O(log n) without allocating,
 * which is what an intrusive red-black tree with a cached leftmost node
 * gives.
 *
 * The algorithm is the textbook one (CLRS chapter 13): every node is red
 * or black, the root is black, a red node has no red child, and every path
 * from a node down to a leaf crosses the same number of black nodes.  Hence
 * the height is at most 2 log2(n + 1).  Insertion links a red leaf and then
 * repairs red-red violations by recolouring and at most two rotations;
 * erasure splices out a node with at most one child (swapping a node with
 * two children for its successor first) and repairs a missing black with at
 * most three rotations.  NULL children are the black leaves.
 *
 * Equal keys are allowed: the caller's walk decides which side they go to
 * (rb_insert() puts a new node after its equals, so equal keys keep their
 * insertion order, as CFQ's service trees need).
 *
 * Threading: none; a tree belongs to whoever owns the structure it is in.
 */
#include <stddef.h>

#include "rbtree.h"

static void
rb_rotate_left (struct rb_root *r, struct rb_node *x)
{
  struct rb_node *y = x->right;

  x->right = y->left;
  if (y->left)
    y->left->parent = x;
  y->parent = x->parent;
  if (!x->parent)
    r->node = y;
  else if (x == x->parent->left)
    x->parent->left = y;
  else
    x->parent->right = y;
  y->left = x;
  x->parent = y;
}

static void
rb_rotate_right (struct rb_root *r, struct rb_node *x)
{
  struct rb_node *y = x->left;

  x->left = y->right;
  if (y->right)
    y->right->parent = x;
  y->parent = x->parent;
  if (!x->parent)
    r->node = y;
  else if (x == x->parent->right)
    x->parent->right = y;
  else
    x->parent->left = y;
  y->right = x;
  x->parent = y;
}

static void
rb_insert_fixup (struct rb_root *r, struct rb_node *z)
{
  while (z->parent && z->parent->red) {
    struct rb_node *p = z->parent, *g = p->parent, *u;

    /* p is red, so it is not the root and g exists. */
    if (p == g->left) {
      u = g->right;
      if (u && u->red) {
        p->red = 0;
        u->red = 0;
        g->red = 1;
        z = g;
        continue;
      }
      if (z == p->right) {
        rb_rotate_left (r, p);
        z = p;
        p = z->parent;
      }
      p->red = 0;
      g->red = 1;
      rb_rotate_right (r, g);
    }
    else {
      u = g->left;
      if (u && u->red) {
        p->red = 0;
        u->red = 0;
        g->red = 1;
        z = g;
        continue;
      }
      if (z == p->left) {
        rb_rotate_right (r, p);
        z = p;
        p = z->parent;
      }
      p->red = 0;
      g->red = 1;
      rb_rotate_left (r, g);
    }
  }
  r->node->red = 0;
}

void
rb_insert_at (struct rb_root *r, struct rb_node *n, struct rb_node *parent,
              struct rb_node **link, bool leftmost)
{
  n->parent = parent;
  n->left = n->right = NULL;
  n->red = 1;
  *link = n;
  if (leftmost)
    r->leftmost = n;
  r->count++;
  rb_insert_fixup (r, n);
}

void
rb_insert (struct rb_root *r, struct rb_node *n,
           bool (*less) (const struct rb_node *a, const struct rb_node *b))
{
  struct rb_node **link = &r->node, *parent = NULL;
  bool leftmost = true;

  while (*link) {
    parent = *link;
    if (less (n, parent))
      link = &parent->left;
    else {
      link = &parent->right;
      leftmost = false;
    }
  }
  rb_insert_at (r, n, parent, link, leftmost);
}

static struct rb_node *
rb_min (struct rb_node *n)
{
  while (n->left)
    n = n->left;
  return n;
}

struct rb_node *
rb_next (const struct rb_node *n)
{
  const struct rb_node *p;

  if (n->right)
    return rb_min (n->right);
  while ((p = n->parent) && n == p->right)
    n = p;
  return (struct rb_node *) p;
}

struct rb_node *
rb_prev (const struct rb_node *n)
{
  const struct rb_node *p;

  if (n->left) {
    n = n->left;
    while (n->right)
      n = n->right;
    return (struct rb_node *) n;
  }
  while ((p = n->parent) && n == p->left)
    n = p;
  return (struct rb_node *) p;
}

struct rb_node *
rb_last (const struct rb_root *r)
{
  struct rb_node *n = r->node;

  if (!n)
    return NULL;
  while (n->right)
    n = n->right;
  return n;
}

/* Put v where u was (u's parent now points at v). */
static void
rb_transplant (struct rb_root *r, struct rb_node *u, struct rb_node *v)
{
  if (!u->parent)
    r->node = v;
  else if (u == u->parent->left)
    u->parent->left = v;
  else
    u->parent->right = v;
  if (v)
    v->parent = u->parent;
}

/* x (possibly NULL) sits under parent and carries an extra black. */
static void
rb_erase_fixup (struct rb_root *r, struct rb_node *x, struct rb_node *parent)
{
  while (x != r->node && (!x || !x->red)) {
    struct rb_node *w;

    if (x == parent->left) {
      w = parent->right;
      if (w->red) {
        w->red = 0;
        parent->red = 1;
        rb_rotate_left (r, parent);
        w = parent->right;
      }
      if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
        w->red = 1;
        x = parent;
        parent = x->parent;
      }
      else {
        if (!w->right || !w->right->red) {
          w->left->red = 0;
          w->red = 1;
          rb_rotate_right (r, w);
          w = parent->right;
        }
        w->red = parent->red;
        parent->red = 0;
        if (w->right)
          w->right->red = 0;
        rb_rotate_left (r, parent);
        x = r->node;
        break;
      }
    }
    else {
      w = parent->left;
      if (w->red) {
        w->red = 0;
        parent->red = 1;
        rb_rotate_right (r, parent);
        w = parent->left;
      }
      if ((!w->right || !w->right->red) && (!w->left || !w->left->red)) {
        w->red = 1;
        x = parent;
        parent = x->parent;
      }
      else {
        if (!w->left || !w->left->red) {
          w->right->red = 0;
          w->red = 1;
          rb_rotate_left (r, w);
          w = parent->left;
        }
        w->red = parent->red;
        parent->red = 0;
        if (w->left)
          w->left->red = 0;
        rb_rotate_right (r, parent);
        x = r->node;
        break;
      }
    }
  }
  if (x)
    x->red = 0;
}

void
rb_erase (struct rb_root *r, struct rb_node *z)
{
  struct rb_node *x, *xparent;
  int removed_red;

  if (r->leftmost == z)
    r->leftmost = rb_next (z);

  if (!z->left) {
    x = z->right;
    xparent = z->parent;
    removed_red = z->red;
    rb_transplant (r, z, z->right);
  }
  else if (!z->right) {
    x = z->left;
    xparent = z->parent;
    removed_red = z->red;
    rb_transplant (r, z, z->left);
  }
  else {
    struct rb_node *y = rb_min (z->right);

    removed_red = y->red;
    x = y->right;
    if (y->parent == z)
      xparent = y;
    else {
      xparent = y->parent;
      rb_transplant (r, y, y->right);
      y->right = z->right;
      y->right->parent = y;
    }
    rb_transplant (r, z, y);
    y->left = z->left;
    y->left->parent = y;
    y->red = z->red;
  }
  if (!removed_red && r->node)
    rb_erase_fixup (r, x, xparent);
  r->count--;
  rb_clear (z);
}
