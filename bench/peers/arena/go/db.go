package main

// HttpArena's async-db and crud profiles on pgx v4's pgxpool, written the way Go services
// usually are: one pool from DATABASE_URL (MaxConns from DATABASE_MAX_CONN), rows scanned
// into structs (tags, a JSONB array, into []string), encoding/json for the answers, and
// the crud single-item cache a sync.Map of serialized items with an absolute expiry.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

type dbRating struct {
	Score int32 `json:"score"`
	Count int32 `json:"count"`
}

type dbItem struct {
	ID       int32    `json:"id"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	Price    int32    `json:"price"`
	Quantity int32    `json:"quantity"`
	Active   bool     `json:"active"`
	Tags     []string `json:"tags"`
	Rating   dbRating `json:"rating"`
}

type itemInput struct {
	ID       *int32  `json:"id,omitempty"`
	Name     *string `json:"name"`
	Category *string `json:"category,omitempty"`
	Price    *int32  `json:"price"`
	Quantity *int32  `json:"quantity"`
}

type cached struct {
	body    []byte
	expires time.Time
}

type database struct {
	pool  *pgxpool.Pool
	cache sync.Map // int32 -> cached
}

const selectItems = "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count FROM items"

// openDatabase builds the pool from DATABASE_URL (nil, nil when it is not set). pgxpool
// connects lazily here: the server starts whatever the database's state.
func openDatabase() (*database, error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return nil, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if n, err := strconv.Atoi(os.Getenv("DATABASE_MAX_CONN")); err == nil && n > 0 {
		cfg.MaxConns = int32(n)
	}
	cfg.LazyConnect = true
	pool, err := pgxpool.ConnectConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &database{pool: pool}, nil
}

func writeJSON(w http.ResponseWriter, status int, v interface{}) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(w, status, body)
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

func scanItems(rows pgx.Rows) ([]dbItem, error) {
	defer rows.Close()
	items := []dbItem{}
	for rows.Next() {
		var it dbItem
		if err := rows.Scan(&it.ID, &it.Name, &it.Category, &it.Price, &it.Quantity, &it.Active, &it.Tags,
			&it.Rating.Score, &it.Rating.Count); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// intParam: the query parameter as an integer, def when absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func (db *database) asyncDB(w http.ResponseWriter, r *http.Request) {
	min, e1 := intParam(r, "min", 10)
	max, e2 := intParam(r, "max", 50)
	limit, e3 := intParam(r, "limit", 50)
	if e1 != nil || e2 != nil || e3 != nil {
		http.Error(w, "min, max and limit must be integers", http.StatusBadRequest)
		return
	}
	rows, err := db.pool.Query(r.Context(), selectItems+" WHERE price BETWEEN $1 AND $2 LIMIT $3", min, max,
		clamp(limit, 1, 50))
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	items, err := scanItems(rows)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Items []dbItem `json:"items"`
		Count int      `json:"count"`
	}{items, len(items)})
}

func (db *database) crudList(w http.ResponseWriter, r *http.Request) {
	page, e1 := intParam(r, "page", 1)
	limit, e2 := intParam(r, "limit", 10)
	if e1 != nil || e2 != nil || page < 1 {
		http.Error(w, "page and limit must be integers, page from 1", http.StatusBadRequest)
		return
	}
	limit = clamp(limit, 1, 50)
	category := r.URL.Query().Get("category")
	if category == "" {
		category = "electronics"
	}
	rows, err := db.pool.Query(r.Context(), selectItems+" WHERE category = $1 ORDER BY id LIMIT $2 OFFSET $3",
		category, limit, (page-1)*limit)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	items, err := scanItems(rows)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Items []dbItem `json:"items"`
		Total int      `json:"total"`
		Page  int      `json:"page"`
		Limit int      `json:"limit"`
	}{items, len(items), page, limit})
}

func (db *database) crudRead(w http.ResponseWriter, r *http.Request, id int32) {
	if c, ok := db.cache.Load(id); ok && time.Now().Before(c.(cached).expires) {
		w.Header()["X-Cache"] = []string{"HIT"}
		writeBody(w, http.StatusOK, c.(cached).body)
		return
	}
	var it dbItem
	err := db.pool.QueryRow(r.Context(), selectItems+" WHERE id = $1", id).Scan(&it.ID, &it.Name, &it.Category,
		&it.Price, &it.Quantity, &it.Active, &it.Tags, &it.Rating.Score, &it.Rating.Count)
	if errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, "no such item", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	body, _ := json.Marshal(it)
	db.cache.Store(id, cached{body, time.Now().Add(200 * time.Millisecond)})
	w.Header()["X-Cache"] = []string{"MISS"}
	writeBody(w, http.StatusOK, body)
}

func (db *database) crudCreate(w http.ResponseWriter, r *http.Request) {
	var in itemInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.ID == nil || in.Name == nil ||
		in.Category == nil || in.Price == nil || in.Quantity == nil {
		http.Error(w, "the body must be a JSON item with id, name, category, price, quantity", http.StatusBadRequest)
		return
	}
	_, err := db.pool.Exec(r.Context(), "INSERT INTO items (id, name, category, price, quantity, active, tags,"+
		" rating_score, rating_count) VALUES ($1, $2, $3, $4, $5, true, '[]', 0, 0) ON CONFLICT (id) DO UPDATE"+
		" SET name = EXCLUDED.name, category = EXCLUDED.category, price = EXCLUDED.price, quantity = EXCLUDED.quantity",
		*in.ID, *in.Name, *in.Category, *in.Price, *in.Quantity)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	db.cache.Delete(*in.ID)
	writeJSON(w, http.StatusCreated, in)
}

func (db *database) crudUpdate(w http.ResponseWriter, r *http.Request, id int32) {
	var in itemInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Name == nil || in.Price == nil ||
		in.Quantity == nil {
		http.Error(w, "the body must be a JSON object with name, price, quantity", http.StatusBadRequest)
		return
	}
	tag, err := db.pool.Exec(r.Context(), "UPDATE items SET name = $1, price = $2, quantity = $3 WHERE id = $4",
		*in.Name, *in.Price, *in.Quantity, id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if tag.RowsAffected() == 0 {
		http.Error(w, "no such item", http.StatusNotFound)
		return
	}
	db.cache.Delete(id)
	in.ID, in.Category = &id, nil
	writeJSON(w, http.StatusOK, in)
}

// dbRoutes adds /async-db and /crud/items[/{id}]; without a database they answer 503.
func dbRoutes(mux *http.ServeMux, db *database) {
	if db == nil {
		none := func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no database: set DATABASE_URL", http.StatusServiceUnavailable)
		}
		mux.HandleFunc("/async-db", none)
		mux.HandleFunc("/crud/items", none)
		mux.HandleFunc("/crud/items/", none)
		return
	}
	mux.HandleFunc("/async-db", db.asyncDB)
	mux.HandleFunc("/crud/items", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			db.crudList(w, r)
		case http.MethodPost:
			db.crudCreate(w, r)
		default:
			methodNotAllowed(w, "GET, POST")
		}
	})
	mux.HandleFunc("/crud/items/", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/crud/items/"), 10, 32)
		if err != nil {
			http.Error(w, "the id must be an integer", http.StatusBadRequest)
			return
		}
		switch r.Method {
		case http.MethodGet:
			db.crudRead(w, r, int32(id))
		case http.MethodPut:
			db.crudUpdate(w, r, int32(id))
		default:
			methodNotAllowed(w, "GET, PUT")
		}
	})
}
