// Package custom adds products whose sku is unique by a constraint in deploy/products.ddl,
// a file oncelint reads only when -schema names it. (Not in the shared run: its findings
// depend on the flag; see TestSchemaFlag.)
package custom

import (
	"errors"

	"gorm.io/gorm"

	"ormshop/models"
)

// AddProduct looks the sku up, then creates the product.
func AddProduct(db *gorm.DB, sku string) error {
	var p models.Product
	if err := db.Where("sku = ?", sku).First(&p).Error; err == nil {
		return errors.New("exists")
	}
	return db.Create(&models.Product{SKU: sku}).Error
}
