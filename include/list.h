/* list.h: intrusive doubly-linked circular lists.
 *
 * The scheduler must not allocate on the dispatch path, so every structure
 * that sits on a list carries its own link.  An empty list points at itself.
 */
#ifndef CFQ_LIST_H
#define CFQ_LIST_H

#include <stddef.h>
#include <stdbool.h>

struct list {
  struct list *next, *prev;
};

#define LIST_INIT(name) { &(name), &(name) }

#define container_of(ptr, type, member) \
  ((type *) ((char *) (ptr) - offsetof (type, member)))

#define list_entry(ptr, type, member) container_of (ptr, type, member)

static inline void
list_init (struct list *l)
{
  l->next = l->prev = l;
}

static inline bool
list_empty (const struct list *l)
{
  return l->next == l;
}

static inline void
list__add (struct list *n, struct list *prev, struct list *next)
{
  next->prev = n;
  n->next = next;
  n->prev = prev;
  prev->next = n;
}

/* Insert n at the tail of head (before head). */
static inline void
list_add_tail (struct list *n, struct list *head)
{
  list__add (n, head->prev, head);
}

/* Insert n at the front of head (after head). */
static inline void
list_add (struct list *n, struct list *head)
{
  list__add (n, head, head->next);
}

/* Unlink n and leave it pointing at itself, so list_empty(n) is true
 * and a second list_del is harmless.
 */
static inline void
list_del (struct list *n)
{
  n->prev->next = n->next;
  n->next->prev = n->prev;
  list_init (n);
}

static inline struct list *
list_first (const struct list *head)
{
  return list_empty (head) ? NULL : head->next;
}

#define list_for_each(pos, head) \
  for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#define list_for_each_safe(pos, n, head) \
  for ((pos) = (head)->next, (n) = (pos)->next; (pos) != (head); \
       (pos) = (n), (n) = (pos)->next)

#endif /* CFQ_LIST_H */
