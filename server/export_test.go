package server

import "github.com/gin-gonic/gin"

// Routes lists the routes gin registered, for the OpenAPI test.
func (s *Server) Routes() gin.RoutesInfo { return s.engine.Routes() }

// SessionActions are the endpoints /v1/sessions/{id}/… dispatches to.
var SessionActions = sessionActions
